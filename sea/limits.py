"""Bounds of a pulse: step budget, visits per node, nesting depth, approvals policy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True, slots=True)
class Limits:
    """What a pulse may do before it is stopped with a clear error."""

    max_steps: int = 500
    """Node executions per pulse, counting every nested playbook."""
    max_visits: int = 100
    """Executions of one node within one playbook run: the bound of every loop."""
    max_depth: int = 8
    """Nesting of sub-playbook calls (the top-level playbook is depth 0)."""
    approval_tools: frozenset[str] = field(default_factory=frozenset)
    """Tools that run only after a person approves the call (the pulse waits)."""
    unlisted_exec: Literal["deny", "ask"] = "deny"
    """An ``exec`` of a playbook that is not allowed: fail (``deny``) or ask a person."""

    @property
    def recursion_limit(self) -> int:
        """LangGraph's superstep limit, set above ours so our bound error comes first."""
        return self.max_steps + 10
