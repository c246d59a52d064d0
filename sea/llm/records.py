"""What one LLM call did: the record every call produces, and the tool call a model chose."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import InitVar, dataclass, field, fields, replace
from typing import Any, Literal

from langchain_core.messages import BaseMessage

from saimemory.calls import CacheOutcome, CallRecord
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
        intent_pattern: The pattern the pulse's intent chose, when the calling node took it
            in place of its profile's (``pattern`` is then this one; None: the node's
            profile decided).
        counted_by: How the context's tokens were counted (``model``, ``tiktoken:...``,
            ``estimate``; :mod:`sea.llm.tokens`).
        cache: ``hit`` (answered from the response cache, no model call) or ``miss`` (the
            model was called and its answer kept); None: the call was not cacheable.
        tokens_saved: For a hit: the tokens (in and out) the cached call had used.
        stable_chars: How many characters the system message's stable prefix holds (Base,
            pins, guidelines: what stays byte-identical from call to call, for providers'
            prompt caches; :mod:`sea.llm.compose`).
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
    intent_pattern: str | None = None
    counted_by: str | None = None
    cache: CacheOutcome | None = None
    tokens_saved: int = 0
    stable_chars: int = 0

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict: every field, by its name, in order."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def call_row(self, persona: str, pulse_id: str) -> CallRecord:
        """The call's stored row (``sea stats``): the counts clamped at 0, rate-limited
        requests counted as retries, and whether a fallback model answered.

        Args:
            persona: The persona whose pulse made the call.
            pulse_id: The pulse that made it.

        Returns:
            The row SAIMemory keeps in ``call_records``.
        """
        return CallRecord(
            persona=persona,
            kind="model",
            name=self.model or "unknown",
            outcome=self.outcome,
            pulse_id=pulse_id,
            playbook=self.playbook or None,
            node=self.node or None,
            pattern=self.pattern,
            model_kind=self.model_kind,
            latency_s=max(0.0, self.latency_s),
            tokens_in=max(0, self.tokens_in),
            tokens_out=max(0, self.tokens_out),
            retries=max(0, self.retries) + max(0, self.rate_limited),
            cost=max(0.0, self.cost),
            fallback=self.fallback is not None,
            error=self.error,
            cache=self.cache,
            tokens_saved=max(0, self.tokens_saved),
        )


@dataclass(slots=True)
class CallTracker:
    """Collects what a call does while it runs, then ends its :class:`LLMCallRecord`.

    ``record`` is the call's record so far: the call path replaces it (``dataclasses.replace``)
    as it learns the model, the pattern, the cost... and adds to its lists (warnings,
    attempts). Beside it is kept only what a running call has and its record does not: when it
    started, the messages as sent, the tokens counted and the text streamed so far;
    :meth:`finish` puts them into the record, with how the call ended (until then the record
    says ``cancelled``: a call that never ends was).
    """

    playbook: InitVar[str]
    node: InitVar[str]
    clock: Callable[[], float]
    messages: Sequence[BaseMessage] = ()
    usage: Usage = field(default_factory=Usage)
    partial_text: str = ""
    started: float = field(init=False)
    record: LLMCallRecord = field(init=False)

    def __post_init__(self, playbook: str, node: str) -> None:
        self.started = self.clock()
        self.record = LLMCallRecord(playbook, node, model="unknown", messages=[], response=None,
                                    latency_s=0.0, tokens_in=0, tokens_out=0, retries=0,
                                    outcome="cancelled")

    def finish(
        self, outcome: Outcome, response: Any = None, *, error: str | None = None
    ) -> LLMCallRecord:
        """The record of the call, ended now."""
        return replace(
            self.record,
            messages=message_dicts(self.messages),
            response=self.partial_text if response is None and self.partial_text else response,
            latency_s=max(0.0, self.clock() - self.started),
            tokens_in=self.usage.tokens_in,
            tokens_out=self.usage.tokens_out,
            outcome=outcome,
            error=error,
        )
