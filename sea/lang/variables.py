"""The variables every playbook run has, whatever its nodes define.

:class:`RunVariables` is the one list of the values the engine sets when a run starts (the
engine builds its initial state from it); ``last`` and ``error`` are kept by the engine as the
run goes; :data:`RUN_DEFAULTS` are SAIVerse's run variables (:mod:`sea.lang.saiverse`), read
with their default when the run was not given them. The static checks read all of them
from here.
"""

from __future__ import annotations

from typing import Final, TypedDict

from sea.lang.saiverse import RUN_VARIABLES, run_defaults

__all__ = [
    "ALWAYS_DEFINED",
    "BUILTIN_VARIABLES",
    "KEPT_VARIABLES",
    "INTENT_PATTERN",
    "INTENT_STAGE",
    "INTENT_VARIABLES",
    "SAIVERSE_RUN_VARIABLES",
    "RunVariables",
    "run_defaults",
]


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
"""The engine's own variables: every run has them (with :data:`SAIVERSE_RUN_VARIABLES`, every
variable a playbook may read without defining it)."""

SAIVERSE_RUN_VARIABLES: Final[frozenset[str]] = frozenset(
    rule.name for rule in RUN_VARIABLES
) - BUILTIN_VARIABLES
"""SAIVerse's run variables besides the builtins: ``metadata``, the metadata of the user
message that started the pulse (a pulse or call argument ``metadata``; ``{}`` without)."""


ALWAYS_DEFINED: Final[frozenset[str]] = (BUILTIN_VARIABLES - {"error"}) | SAIVERSE_RUN_VARIABLES
"""Variables a static check may assume are defined at every node (``error`` only after an
``error_next`` edge)."""


INTENT_PATTERN: Final[str] = "prompt_pattern"
"""The variable that holds the pulse's intent's prompt pattern (seed 003, flow 3): set by the
playbook that read the intent (``sub_intent`` outputs it), passed on to every playbook called
after it, and read by the model-calling nodes that take it (their ``intent_patterns``)."""

INTENT_STAGE: Final[str] = "intent_stage"
"""The variable that holds the Specialized stage the pulse's intent implies (``PLANNING``...;
``sub_intent`` outputs it), passed on like :data:`INTENT_PATTERN` and read with it."""

INTENT_VARIABLES: Final[tuple[str, ...]] = (INTENT_PATTERN, INTENT_STAGE)
"""The intent's variables every callee receives."""
