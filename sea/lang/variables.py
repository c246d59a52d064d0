"""The variables every playbook run has, whatever its nodes define."""

from __future__ import annotations

from typing import Final

BUILTIN_VARIABLES: Final[frozenset[str]] = frozenset(
    {"input", "last", "error", "persona_id", "persona_name", "pulse_id"}
)
"""Set by the engine in every playbook run (besides declared inputs and node outputs):

* ``input``: the pulse's input text (or the caller's ``input`` argument),
* ``last``: the result of the most recent node that produced one,
* ``error``: the last failure routed to an ``error_next`` (code, message, node),
* ``persona_id``, ``persona_name``: who is thinking,
* ``pulse_id``: the id of the current pulse.
"""

ALWAYS_DEFINED: Final[frozenset[str]] = BUILTIN_VARIABLES - {"error"}
"""Builtins a static check may assume are defined at every node (``error`` only after an
``error_next`` edge)."""
