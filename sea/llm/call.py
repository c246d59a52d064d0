"""The one LLM call path: context by pattern, model choice with fallbacks, rate-limit
backoff, structured output, tools, streaming, budgets, and a record of every call.

Every call invokes the model with ``config={"metadata": {"sea_playbook", "sea_node",
"sea_pulse_id"}}``. Failures raise :class:`sea.llm.errors.ModelError` (or its subclass
:class:`sea.errors.StructuredOutputError`) carrying the call's record; a call past a budget
raises :class:`sea.llm.errors.BudgetExceeded`; ``asyncio.CancelledError`` and
:class:`sea.errors.PulseCancelled` (raised by an ``on_token`` callback) propagate untouched;
the record, with outcome ``cancelled`` and the text streamed so far, goes to ``on_record``.

A call tries the models of its chain (:meth:`sea.llm.models.ModelSet.chain`) in order: when
one fails (the provider raised, it kept answering with rate limits, or its structured answer
was still invalid after the retries) and nothing was streamed yet, the next is tried once;
the record names the model that answered (``fallback``) and why the others failed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from saimemory import ROOT_SCOPE, HistoryBudget, MessageStore, Persona
from saimemory.base import DEFAULT_BUDGET
from saimemory.errors import MemoryStoreError
from sea.errors import PulseCancelled, SeaError, SizeLimitExceeded
from sea.llm.assemble import ContextAssembler, ContextRequest, specialized_label
from sea.llm.attempt import (
    ESTIMATED_TOKENS,
    Answer,
    AnswerCheck,
    StructuredAsk,
    TokenCallback,
    ask_plain,
    ask_structured,
)
from sea.llm.budget import Budget, Meter
from sea.llm.cache import CachedAnswer, CacheKey, cache_key, is_deterministic, mark_stable_prefix
from sea.llm.errors import BudgetExceeded, ModelError, ScriptExhausted, StructuredOutputError
from sea.llm.messages import estimate_tokens
from sea.llm.models import ModelSet, model_name
from sea.llm.options import LLMOptions
from sea.llm.patterns import DEFAULT_PROFILE, Pattern, profile_named
from sea.llm.records import CallTracker, LLMCallRecord, ToolCallRequest
from sea.llm.resilience import is_rate_limit
from sea.llm.specialized import Stage
from sea.llm.structured import Usage, check_schema, with_playbook_enum
from sea.llm.tokens import TokenCounter, counter_for

__all__ = [
    "ESTIMATED_TOKENS",
    "LLMCallRecord",
    "LLMCaller",
    "LLMRequest",
    "LLMResult",
    "ToolCallRequest",
    "estimate_tokens",
]

DEFAULT_CONTEXT_PROFILE = DEFAULT_PROFILE
"""The context of a node without ``context_profile``: system prompt, history and pulse."""

RecordCallback = Callable[[LLMCallRecord], None]


@dataclass(frozen=True, slots=True)
class LLMRequest:
    """What an ``llm`` node asks of the call path.

    Attributes:
        playbook: The calling playbook's name.
        node: The calling node's id.
        persona: Whose context is built.
        profile: The node's ``context_profile`` (None: the conversation context, and
            ``model_type`` chooses the model).
        model_type: ``normal`` or ``lightweight`` (used when ``profile`` is None).
        prompt: The rendered ``action`` (None or empty: no prompt).
        response_schema: JSON Schema of a structured answer.
        tools: Tools the model may call (one call per answer).
        playbook_enum: Names put as the ``enum`` of the schema's ``playbook`` property.
        stream: Stream tokens (speaking nodes); ignored for structured answers.
        pulse_id: The running pulse (what the context's pulse rule reads).
        scope: The pulse scope of the calling playbook.
        thread: The memory thread the calling playbook works in (None: the main thread;
            a subagent's sub-thread, see :mod:`sea.engine.subagent`).
        check: For a structured answer: what else is wrong with a value (beyond the
            schema), in words for the model, or None when it is usable. A problem it finds
            is sent back like a schema violation, and takes its place.
        specialized: The node's Specialized guidelines: a stage name or a file path (None:
            the current plan's stage, if any).
        refresh_short_term: Bring the short-term memory up to date when it is behind.
        intent_pattern: The prompt pattern the pulse's intent chose, for a node that takes
            it (its ``intent_patterns``): the context is built by it in place of the
            profile's pattern; the model stays the profile's (None: the profile decides).
        intent_stage: The stage the pulse's intent implies, with ``intent_pattern``: the
            Specialized guidelines when neither ``specialized`` nor an active plan names one.
    """

    playbook: str
    node: str
    persona: Persona
    profile: str | None = None
    model_type: str = "normal"
    prompt: str | None = None
    response_schema: Mapping[str, Any] | None = None
    tools: Sequence[BaseTool] = ()
    playbook_enum: Sequence[str] | None = None
    stream: bool = False
    pulse_id: str | None = None
    scope: str = ROOT_SCOPE
    thread: str | None = None
    check: AnswerCheck | None = None
    specialized: str | None = None
    refresh_short_term: bool = True
    intent_pattern: Pattern | None = None
    intent_stage: Stage | None = None
    light: bool = False
    """The lightweight model whatever the profile says (a playbook on a sub line)."""


@dataclass(frozen=True, slots=True)
class LLMResult:
    """The answer of one call.

    Attributes:
        text: The answer's text (for a structured answer, the model's raw text).
        parsed: The validated object of a structured answer.
        tool_call: The tool call the model chose, if it chose one.
        record: The call's record.
    """

    text: str
    parsed: Any | None
    tool_call: ToolCallRequest | None
    record: LLMCallRecord


class LLMCaller:
    """Makes every LLM call of a pulse (or of a host that calls models itself).

    Args:
        models: The normal and lightweight models, and the fallback chain.
        store: The message store the context is read from.
        max_retries: How many times a rejected structured answer is asked again.
        history_budget: How much earlier conversation a context may hold.
        on_record: Receives the record of every call: ok, failed and cancelled.
        clock: Monotonic seconds (for latency).
        max_answer_chars: The longest answer a call accepts (``Limits.max_answer_chars``
            when a runtime makes the caller; None: no limit). A longer answer fails the
            call with :class:`~sea.errors.SizeLimitExceeded`; a stream is cut off there.
        options: Prices, backoff, safety rules, short-term memory, guidelines.
        budget: What the calls may use together (``Limits.budget``); :attr:`meter` counts.
    """

    def __init__(
        self,
        models: ModelSet,
        store: MessageStore,
        *,
        max_retries: int = 2,
        history_budget: HistoryBudget = DEFAULT_BUDGET,
        on_record: RecordCallback | None = None,
        clock: Callable[[], float] = time.perf_counter,
        max_answer_chars: int | None = None,
        options: LLMOptions | None = None,
        budget: Budget | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self._models = models
        self._store = store
        self._max_retries = max_retries
        self._on_record = on_record
        self._clock = clock
        self._max_answer = max_answer_chars
        self.options = options or LLMOptions()
        """The host's settings of the call path."""
        self.meter = Meter(budget)
        """What this caller's calls have spent, against the budget."""
        self._assembler = ContextAssembler(store, history_budget, self.options)
        self._counters: dict[int, tuple[BaseChatModel, TokenCounter]] = {}

    def counter(self, model: BaseChatModel) -> TokenCounter:
        """How ``model``'s tokens are counted (:func:`sea.llm.tokens.counter_for`, once)."""
        known = self._counters.get(id(model))
        if known is None or known[0] is not model:
            known = self._counters[id(model)] = (model, counter_for(model))
        return known[1]

    async def call(
        self, request: LLMRequest, *, on_token: TokenCallback | None = None
    ) -> LLMResult:
        """Run one call for ``request``.

        Args:
            request: The node's request.
            on_token: Receives each streamed text chunk (only when ``request.stream``).

        Raises:
            ModelError: every model of the chain failed, or the answer is unusable
                (``record`` attached).
            StructuredOutputError: the answer did not match the schema after every retry.
            SizeLimitExceeded: the answer was longer than ``max_answer_chars``.
            BudgetExceeded: the pulse's budget has no room for the call, or the call took
                it past a budget.
        """
        tracker = CallTracker(request.playbook, request.node, self._clock)
        try:
            return await self._run(request, tracker, on_token)
        except (asyncio.CancelledError, PulseCancelled):
            self._settle(tracker.finish("cancelled", error="cancelled"))
            raise
        except BudgetExceeded as exc:
            if exc.playbook is None:
                raise BudgetExceeded(exc.detail, budget=exc.budget, playbook=request.playbook,
                                     node=request.node) from exc
            raise
        except ModelError as exc:
            record = self._settle(tracker.finish("error", error=exc.detail))
            if exc.playbook is None and exc.node is None:
                located = type(exc)(
                    exc.detail, playbook=request.playbook, node=request.node, record=record
                )
                raise located from exc.__cause__
            exc.record = record
            raise
        except SizeLimitExceeded as exc:
            self._settle(tracker.finish("error", error=exc.detail))
            raise SizeLimitExceeded(
                exc.detail, limit=exc.limit, playbook=request.playbook, node=request.node
            ) from exc
        except (SeaError, MemoryStoreError) as exc:
            raise self._failed(tracker, request, str(exc)) from exc
        except Exception as exc:  # the provider's own failure, with its type and message
            problem = f"model {tracker.record.model!r} failed: {type(exc).__name__}: {exc}"
            raise self._failed(tracker, request, problem) from exc

    async def _run(
        self, request: LLMRequest, tracker: CallTracker, on_token: TokenCallback | None
    ) -> LLMResult:
        profile = profile_named(request.profile or DEFAULT_CONTEXT_PROFILE)
        if request.intent_pattern is not None:  # the intent steers the context, not the model
            profile = replace(profile, pattern=request.intent_pattern)
        kind = "lightweight" if request.light else \
            self._models.kind_for(request.profile, request.model_type)
        chain = self._models.chain(kind)
        first = model_name(chain[0][0])
        counter = self.counter(chain[0][0])
        tracker.record = replace(tracker.record, pattern=profile.pattern,
                                 intent_pattern=request.intent_pattern, model=first,
                                 model_kind=chain[0][1], counted_by=counter.by)
        context = ContextRequest(
            request.persona, profile, request.node, request.prompt, request.pulse_id,
            request.scope, request.specialized, request.refresh_short_term, request.thread,
            request.intent_stage, counter, self.options.history_tokens.for_model(first),
        )

        async def summarize(node: str, prompt: str) -> str:
            update = LLMRequest(
                playbook=request.playbook, node=node, persona=request.persona,
                profile="base_specialized", prompt=prompt, pulse_id=request.pulse_id,
                scope=request.scope, specialized="summary", refresh_short_term=False,
                thread=request.thread,
            )
            return (await self.call(update)).text

        composition = await self._assembler.assemble(context, summarize, tracker.record.warnings)
        tracker.messages = composition.messages
        tracker.record = replace(tracker.record, context=composition.parts_json(),
                                 stage=specialized_label(composition),
                                 stable_chars=len(composition.stable))
        ask = self._structured_ask(request)
        key = self._cache_key(chain[0][0], request, tracker, ask)
        if key is not None:
            hit = await self._cached(key, request, tracker, on_token)
            if hit is not None:
                return hit
        self.meter.before_call()
        answer = await self._through_chain(chain, request, tracker, ask, on_token,
                                           composition.stable)
        if key is not None and tracker.record.fallback is None:
            await self._keep(key, tracker, answer)
        return self._ok(tracker, answer)

    def _cache_key(self, model: BaseChatModel, request: LLMRequest, tracker: CallTracker,
                   ask: StructuredAsk | None) -> CacheKey | None:
        """The call's response cache key: None without a cache or for a model that is not
        deterministic (:mod:`sea.llm.cache`)."""
        if self.options.response_cache is None or not is_deterministic(model):
            return None
        schema = None if ask is None else ask.schema
        return cache_key(model, tracker.messages, schema, request.tools)

    async def _cached(self, key: CacheKey, request: LLMRequest, tracker: CallTracker,
                      on_token: TokenCallback | None) -> LLMResult | None:
        """The call answered from the response cache (no model call), or None (a miss)."""
        cache = self.options.response_cache
        assert cache is not None
        try:
            kept = await asyncio.to_thread(cache.lookup, key)
        except Exception as exc:  # a cache that cannot be read: the model is asked
            tracker.record.warnings.append(f"response cache not read: {_reason(exc)}")
            kept = None
        if kept is None:
            tracker.record = replace(tracker.record, cache="miss")
            return None
        tool_call = None
        if kept.tool_call is not None:
            tool_call = ToolCallRequest(str(kept.tool_call["name"]),
                                        dict(kept.tool_call["args"]), str(kept.tool_call["id"]))
        if request.stream and on_token is not None and kept.text and kept.parsed is None:
            await on_token(kept.text)
        record = replace(tracker.finish("ok", kept.response), cache="hit",
                         tokens_saved=kept.tokens_in + kept.tokens_out)
        self._emit(record)  # no model call: nothing spent, nothing counted
        return LLMResult(kept.text, kept.parsed, tool_call, record)

    async def _keep(self, key: CacheKey, tracker: CallTracker, answer: Answer) -> None:
        cache = self.options.response_cache
        assert cache is not None
        tool_call = None if answer.tool_call is None else answer.tool_call.to_json()
        kept = CachedAnswer(answer.text, answer.parsed, tool_call, answer.response,
                            tracker.usage.tokens_in, tracker.usage.tokens_out)
        try:
            await asyncio.to_thread(cache.keep, key, kept)
        except Exception as exc:  # the answer stands; only the next call will not find it
            tracker.record.warnings.append(f"response cache not written: {_reason(exc)}")

    def _structured_ask(self, request: LLMRequest) -> StructuredAsk | None:
        if request.response_schema is None:
            return None
        if request.tools:
            raise ModelError("a node cannot ask for both a response_schema and tools")
        schema = with_playbook_enum(request.response_schema, request.playbook_enum)
        problem = self._schema_problem(schema)
        if problem is not None:
            raise StructuredOutputError(f"response_schema is not a valid JSON Schema: {problem}")
        return StructuredAsk(schema, self._max_retries, self._models.structured, request.check,
                             self._max_answer)

    async def _through_chain(
        self,
        chain: list[tuple[BaseChatModel, str]],
        request: LLMRequest,
        tracker: CallTracker,
        ask: StructuredAsk | None,
        on_token: TokenCallback | None,
        stable: str = "",
    ) -> Answer:
        """Try each model of the chain until one answers (the stable prefix marked for a
        provider that takes cache markers)."""
        base = list(tracker.messages)
        for index, (model, kind) in enumerate(chain):
            name = model_name(model)
            tracker.record = replace(tracker.record, model=name, model_kind=kind)
            sent = mark_stable_prefix(base, stable, model)
            try:
                answer = await self._with_backoff(model, request, tracker, ask, sent, on_token)
            except Exception as exc:
                last = index == len(chain) - 1
                if last or not _falls_back(exc) or tracker.partial_text:
                    raise
                tracker.record.fallback_errors.append(f"{name}: {_reason(exc)}")
                tracker.record.warnings.append(
                    f"model {name!r} failed ({_reason(exc)}); trying "
                    f"{model_name(chain[index + 1][0])!r}"
                )
                continue
            if index > 0:
                tracker.record = replace(tracker.record, fallback=name)
            return answer
        raise AssertionError("a model chain is never empty")

    async def _with_backoff(
        self,
        model: BaseChatModel,
        request: LLMRequest,
        tracker: CallTracker,
        ask: StructuredAsk | None,
        messages: list[Any],
        on_token: TokenCallback | None,
    ) -> Answer:
        """One model's try, asked again after a rate-limit answer (bounded backoff)."""
        backoff = self.options.backoff
        refusals = 0
        while True:
            try:
                return await self._try(model, request, tracker, ask, messages, on_token)
            except Exception as exc:
                if not is_rate_limit(exc) or refusals >= backoff.retries or tracker.partial_text:
                    raise
                delay = backoff.delay(refusals)
                refusals += 1
                record = tracker.record
                tracker.record = replace(record, rate_limited=record.rate_limited + 1)
                record.warnings.append(
                    f"model {record.model!r} is rate limited; asking again in {delay:.2f}s "
                    f"({refusals} of {backoff.retries})"
                )
                await backoff.sleep(delay)

    async def _try(
        self,
        model: BaseChatModel,
        request: LLMRequest,
        tracker: CallTracker,
        ask: StructuredAsk | None,
        messages: list[Any],
        on_token: TokenCallback | None,
    ) -> Answer:
        """One request to one model; what it used is counted even when it fails."""
        config: RunnableConfig = {
            "metadata": {
                "sea_playbook": request.playbook,
                "sea_node": request.node,
                "sea_pulse_id": request.pulse_id,
            }
        }
        usage = Usage()
        try:
            if ask is not None:
                return await ask_structured(model, messages, ask, tracker, usage, config)
            return await ask_plain(
                model, messages, request.tools, tracker, usage, config,
                stream=request.stream, on_token=on_token, limit=self._max_answer,
            )
        finally:
            tracker.usage.tokens_in += usage.tokens_in
            tracker.usage.tokens_out += usage.tokens_out
            record = tracker.record
            cost = self.options.prices.cost(
                record.model, model._llm_type, usage.tokens_in, usage.tokens_out
            )
            tracker.record = replace(record, cost=record.cost + cost)

    @staticmethod
    def _schema_problem(schema: Mapping[str, Any]) -> str | None:
        return check_schema(schema)  # kept per schema content

    def _ok(self, tracker: CallTracker, answer: Answer) -> LLMResult:
        record = tracker.finish("ok", answer.response)
        self.meter.add(record.tokens_in, record.tokens_out, record.cost)
        try:
            self.meter.after_call()
        except BudgetExceeded as exc:
            self._emit(replace(record, outcome="error", error=exc.detail))
            raise
        self._emit(record)
        return LLMResult(answer.text, answer.parsed, answer.tool_call, record)

    def _failed(self, tracker: CallTracker, request: LLMRequest, problem: str) -> ModelError:
        record = self._settle(tracker.finish("error", error=problem))
        return ModelError(problem, playbook=request.playbook, node=request.node, record=record)

    def _settle(self, record: LLMCallRecord) -> LLMCallRecord:
        """Count a call that was made (whatever its outcome) and report its record."""
        self.meter.add(record.tokens_in, record.tokens_out, record.cost)
        self._emit(record)
        return record

    def _emit(self, record: LLMCallRecord) -> None:
        if self._on_record is not None:
            self._on_record(record)


def _falls_back(exc: BaseException) -> bool:
    """A failure the next model of the chain may not have."""
    if isinstance(exc, ScriptExhausted | SizeLimitExceeded | BudgetExceeded | PulseCancelled):
        return False
    if isinstance(exc, ModelError):
        return True
    return not isinstance(exc, SeaError | MemoryStoreError | asyncio.CancelledError)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SeaError):
        text = exc.detail if isinstance(exc, ModelError) else exc.message
        return text.splitlines()[0][:300] if text else type(exc).__name__
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
