"""What one LLM call did: the record every call produces, and the tool call a model chose."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import BaseMessage

from sea.llm.messages import message_dicts
from sea.llm.structured import Usage

Outcome = Literal["ok", "error", "cancelled"]


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool call chosen by a model: run later by a ``tool_call`` node.

    Attributes:
        name: The tool's name (one of the tools offered to the model).
        args: The arguments the model gave (checked when the tool runs).
        id: The provider's call id (generated when the provider gives none).
    """

    name: str
    args: dict[str, Any]
    id: str

    def to_json(self) -> dict[str, Any]:
        """``{"name", "args", "id"}``."""
        return {"name": self.name, "args": self.args, "id": self.id}


@dataclass(frozen=True, slots=True)
class LLMCallRecord:
    """The record of one LLM call (telemetry, traces, replay).

    Attributes:
        playbook: The playbook of the calling node.
        node: The calling node's id.
        model: The model's name.
        messages: The messages sent (of the last attempt, with any retry instructions),
            as ``{"role", "content"}``.
        response: The answer: its text, the parsed object of a structured answer, or a tool
            call as ``{"tool_calls": [{"name", "args", "id"}], "content": text}`` (the scripted
            model's response form).
        latency_s: Wall time of the whole call, retries included.
        tokens_in: Input tokens reported by the provider, summed over attempts.
        tokens_out: Output tokens reported by the provider, summed over attempts.
        retries: How many times the model was asked again after a rejected answer.
        outcome: ``ok``, ``error`` or ``cancelled``.
        error: What went wrong, when the outcome is not ``ok``.
        attempts: Each answer of a structured call, in the scripted response form.
        warnings: Things that did not fail the call but should be seen.
        pattern: The prompt pattern of the context (``base_main_specialized``,
            ``base_main``, ``base_specialized``).
        model_kind: The kind of the model that answered (or was tried last): ``light``,
            ``normal``, or ``fallback`` (a model of the ``ModelSet``'s fallback chain).
        cost: What the call cost (the host's price table; the local model costs 0).
        fallback: The name of the model that answered after the first one failed (None:
            no fallback was needed).
        fallback_errors: Why each model before the one that answered failed.
        rate_limited: How many times a rate-limited request was asked again.
        context: The parts of the composed context and their sizes, in order
            (``[{"part", "tokens", "detail"}]``).
        stage: The Specialized part's stage (``PLANNING``...) or ``file:PATH``, if any.
    """

    playbook: str
    node: str
    model: str
    messages: list[dict[str, str]]
    response: Any
    latency_s: float
    tokens_in: int
    tokens_out: int
    retries: int
    outcome: Outcome
    error: str | None = None
    attempts: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    pattern: str | None = None
    model_kind: str | None = None
    cost: float = 0.0
    fallback: str | None = None
    fallback_errors: list[str] = field(default_factory=list)
    rate_limited: int = 0
    context: list[dict[str, Any]] = field(default_factory=list)
    stage: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict."""
        return {
            "playbook": self.playbook,
            "node": self.node,
            "model": self.model,
            "messages": self.messages,
            "response": self.response,
            "latency_s": self.latency_s,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "retries": self.retries,
            "outcome": self.outcome,
            "error": self.error,
            "attempts": self.attempts,
            "warnings": self.warnings,
            "pattern": self.pattern,
            "model_kind": self.model_kind,
            "cost": self.cost,
            "fallback": self.fallback,
            "fallback_errors": self.fallback_errors,
            "rate_limited": self.rate_limited,
            "context": self.context,
            "stage": self.stage,
        }


@dataclass(slots=True)
class CallTracker:
    """Collects what a call does while it runs, then makes its :class:`LLMCallRecord`."""

    playbook: str
    node: str
    clock: Callable[[], float]
    model: str = "unknown"
    started: float = 0.0
    messages: Sequence[BaseMessage] = ()
    usage: Usage = field(default_factory=Usage)
    partial_text: str = ""
    retries: int = 0
    attempts: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    pattern: str | None = None
    model_kind: str | None = None
    cost: float = 0.0
    fallback: str | None = None
    fallback_errors: list[str] = field(default_factory=list)
    rate_limited: int = 0
    context: list[dict[str, Any]] = field(default_factory=list)
    stage: str | None = None

    def __post_init__(self) -> None:
        self.started = self.clock()

    def finish(
        self, outcome: Outcome, response: Any = None, *, error: str | None = None
    ) -> LLMCallRecord:
        """The record of the call, ended now."""
        return LLMCallRecord(
            playbook=self.playbook,
            node=self.node,
            model=self.model,
            messages=message_dicts(self.messages),
            response=self.partial_text if response is None and self.partial_text else response,
            latency_s=max(0.0, self.clock() - self.started),
            tokens_in=self.usage.tokens_in,
            tokens_out=self.usage.tokens_out,
            retries=self.retries,
            outcome=outcome,
            error=error,
            attempts=list(self.attempts),
            warnings=list(self.warnings),
            pattern=self.pattern,
            model_kind=self.model_kind,
            cost=self.cost,
            fallback=self.fallback,
            fallback_errors=list(self.fallback_errors),
            rate_limited=self.rate_limited,
            context=list(self.context),
            stage=self.stage,
        )
