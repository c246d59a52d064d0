"""The tags the store writes itself: a module of constants, cheap to import (the playbook
checks read it without loading the store's records)."""

from __future__ import annotations

PROVENANCE_COLUMNS: dict[str, str] = {"pulse": "pulse_id", "playbook": "playbook", "node": "node"}
"""Each kind of tag the store gives a message from one of its columns (``pulse:<id>``,
``playbook:<name>``, ``node:<id>``), and that column."""

PROVENANCE_PREFIXES: tuple[str, ...] = tuple(f"{kind}:" for kind in PROVENANCE_COLUMNS)
"""Tags the store adds itself from ``pulse_id``, ``playbook`` and ``node``."""
