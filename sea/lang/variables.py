"""The variables every playbook run has, whatever its nodes define.

:class:`RunVariables` is the one list of the values the engine sets when a run starts (the
engine builds its initial state from it); ``last`` and ``error`` are kept by the engine as the
run goes. The static checks read both from here.
"""

from __future__ import annotations

from typing import Final, TypedDict


class RunVariables(TypedDict):
    """Set by the engine when a playbook run starts (before declared inputs)."""

    input: str
    """The pulse's input text (or the caller's ``input`` argument)."""
    persona_id: str
    """Who is thinking: the persona's id..."""
    persona_name: str
    """... and name."""
    pulse_id: str
    """The id of the current pulse."""


KEPT_VARIABLES: Final[frozenset[str]] = frozenset({"last", "error"})
"""Kept by the engine during the run: ``last``, the result of the most recent node that
produced one; ``error``, the last failure routed to an ``error_next`` (code, message, node)."""

BUILTIN_VARIABLES: Final[frozenset[str]] = frozenset(RunVariables.__annotations__) | KEPT_VARIABLES
"""Every variable a playbook may read without defining it."""

ALWAYS_DEFINED: Final[frozenset[str]] = BUILTIN_VARIABLES - {"error"}
"""Builtins a static check may assume are defined at every node (``error`` only after an
``error_next`` edge)."""
