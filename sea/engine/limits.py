"""Bounds of a pulse: step budget, visits per node, nesting depth, approvals policy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sea.errors import UsageError


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
    ref_text_cap: int = 20_000
    """The most characters a text parameter of a pipeline action receives through a
    ``ref:`` (longer text is cut with a visible note; a parameter's ``maxLength`` may cut
    it shorter)."""

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_visits", "max_depth", "ref_text_cap"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise UsageError(f"Limits.{name} must be a positive integer, got {value!r}")
        if self.unlisted_exec not in ("deny", "ask"):
            raise UsageError(
                f"Limits.unlisted_exec must be 'deny' or 'ask', got {self.unlisted_exec!r}"
            )

    @property
    def recursion_limit(self) -> int:
        """LangGraph's superstep limit, set above ours so our bound error comes first."""
        return self.max_steps + 10
