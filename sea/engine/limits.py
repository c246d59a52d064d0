"""Bounds of a pulse: step budget, visits per node, nesting depth, sizes, approvals policy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sea.errors import UsageError
from sea.llm.budget import Budget


@dataclass(frozen=True, slots=True)
class Limits:
    """What a pulse may do before it is stopped with a clear error.

    The size limits count characters of a value's compact JSON text (a string's length, a
    number's digits; measured without writing the JSON, see :func:`sea.jsontypes.json_size`).
    Going past one fails the node with :class:`~sea.errors.SizeLimitExceeded` (``SEA565``,
    its ``limit`` names the field), which an ``error_next`` routes; nothing of the oversized
    value is kept, so neither memory nor the checkpoints grow with it.

    Expressions have limits of their own, the same for every host because ``sea validate``
    must judge a playbook as every runtime does, and because a higher bound would let the
    native CEL parser recurse into a crash: at most
    :data:`sea.lang.expressions.MAX_EXPRESSION_LENGTH` characters and
    :data:`sea.lang.expressions.MAX_EXPRESSION_DEPTH` levels of nesting (``SEA037``).
    """

    max_steps: int = 500
    """Node executions per pulse, counting every nested playbook."""
    max_visits: int = 100
    """Executions of one node within one playbook run: the bound of every loop."""
    max_depth: int = 8
    """Nesting of sub-playbook calls (the top-level playbook is depth 0)."""
    max_subagent_depth: int = 2
    """Nesting of subagent calls (``"execution": "subagent"``): threads of memory opened
    inside one another (see :mod:`sea.engine.subagent`)."""
    approval_tools: frozenset[str] = field(default_factory=frozenset)
    """Tools that run only after a person approves the call (the pulse waits)."""
    unlisted_exec: Literal["deny", "ask"] = "deny"
    """An ``exec`` of a playbook that is not allowed: fail (``deny``) or ask a person."""
    ref_text_cap: int = 20_000
    """The most characters a text parameter of a pipeline action receives through a
    ``ref:`` (longer text is cut with a visible note; a parameter's ``maxLength`` may cut
    it shorter)."""
    max_value_chars: int = 1_000_000
    """The largest value one node may store in one variable (or in ``last``)."""
    max_state_chars: int = 4_000_000
    """The largest the state of one playbook run may grow: its variables, ``last`` and the
    texts it spoke, together (a ``set`` loop that doubles a string stops here)."""
    max_tool_result_chars: int = 1_000_000
    """The largest result a tool may return (the result is dropped, the call fails)."""
    max_answer_chars: int = 200_000
    """The longest answer a model may give in one call, streamed or not (a stream is cut
    off when it passes this)."""
    max_message_chars: int = 1_000_000
    """The longest message a node may write to memory."""
    tool_timeout_s: float = 600.0
    """The longest one tool call may take, in seconds (a host tool, an MCP server's, the
    engine's own). Past it the call is abandoned and the node fails with ``SEA533``
    (:class:`~sea.errors.ToolTimedOut`), which an ``error_next`` routes. A synchronous
    tool's thread cannot be stopped: it is left to finish on its own, in a daemon thread
    that does not keep the process alive."""
    budget: Budget = field(default_factory=Budget)
    """What the pulse's model calls may use together: calls, tokens in and out, cost (no
    bound by default). Going past one fails the node with ``SEA566`` naming the budget,
    which an ``error_next`` routes (see :mod:`sea.llm.budget`)."""

    def __post_init__(self) -> None:
        for name in (
            "max_steps", "max_visits", "max_depth", "max_subagent_depth", "ref_text_cap",
            "max_value_chars", "max_state_chars", "max_tool_result_chars", "max_answer_chars",
            "max_message_chars",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise UsageError(f"Limits.{name} must be a positive integer, got {value!r}")
        timeout = self.tool_timeout_s
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not (
            0 < timeout < float("inf")
        ):
            raise UsageError(
                f"Limits.tool_timeout_s must be a number of seconds > 0, got {timeout!r}")
        if self.unlisted_exec not in ("deny", "ask"):
            raise UsageError(
                f"Limits.unlisted_exec must be 'deny' or 'ask', got {self.unlisted_exec!r}"
            )

    @property
    def recursion_limit(self) -> int:
        """LangGraph's superstep limit, set above ours so our bound error comes first."""
        return self.max_steps + 10
