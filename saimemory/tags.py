"""The tags the store writes itself: a module of constants, cheap to import (the playbook
checks read it without loading the store's records)."""

from __future__ import annotations

PROVENANCE_PREFIXES: tuple[str, ...] = ("pulse:", "playbook:", "node:")
"""Tags the store adds itself from ``pulse_id``, ``playbook`` and ``node``."""
