"""The one LLM call path: context by profile, model choice, structured output, tools,
streaming, and a record of every call.

Every call invokes the model with ``config={"metadata": {"sea_playbook", "sea_node",
"sea_pulse_id"}}``. Failures raise :class:`sea.llm.errors.ModelError` (or its subclass
:class:`sea.errors.StructuredOutputError`) carrying the call's record;
``asyncio.CancelledError`` and :class:`sea.errors.PulseCancelled` (raised by an ``on_token``
callback) propagate untouched; the record, with outcome ``cancelled`` and the text streamed so
far, goes to ``on_record``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool

from saimemory import ROOT_SCOPE, HistoryBudget, MessageStore, Persona
from saimemory.base import DEFAULT_BUDGET
from saimemory.errors import MemoryStoreError
from sea.errors import PulseCancelled, SeaError
from sea.llm.context import build_messages
from sea.llm.errors import ModelError, StructuredOutputError
from sea.llm.models import ModelSet, model_name
from sea.llm.records import CallTracker, LLMCallRecord, ToolCallRequest
from sea.llm.structured import StructuredOutcome, check_schema, run_structured, with_playbook_enum

__all__ = ["LLMCallRecord", "LLMCaller", "LLMRequest", "LLMResult", "ToolCallRequest"]

DEFAULT_CONTEXT_PROFILE = "conversation"
"""The context of a node without ``context_profile``: system prompt, history and pulse."""

TokenCallback = Callable[[str], Awaitable[None]]
AnswerCheck = Callable[[Any], "str | None"]
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
        check: For a structured answer: what else is wrong with a value (beyond the
            schema), in words for the model, or None when it is usable. A problem it finds
            is sent back like a schema violation, and takes its place.
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
    check: AnswerCheck | None = None


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
    """Makes every LLM call of a runtime.

    Args:
        models: The normal and lightweight models.
        store: The message store the context is read from.
        max_retries: How many times a rejected structured answer is asked again.
        history_budget: How much earlier conversation a context may hold.
        on_record: Receives the record of every call: ok, failed and cancelled.
        clock: Monotonic seconds (for latency).
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
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self._models = models
        self._store = store
        self._max_retries = max_retries
        self._budget = history_budget
        self._on_record = on_record
        self._clock = clock
        self._checked_schemas: dict[bytes, str | None] = {}

    async def call(
        self, request: LLMRequest, *, on_token: TokenCallback | None = None
    ) -> LLMResult:
        """Run one call for ``request``.

        Args:
            request: The node's request.
            on_token: Receives each streamed text chunk (only when ``request.stream``).

        Raises:
            ModelError: the model failed or its answer is unusable (``record`` attached).
            StructuredOutputError: the answer did not match the schema after every retry.
        """
        tracker = CallTracker(request.playbook, request.node, self._clock)
        try:
            return await self._run(request, tracker, on_token)
        except (asyncio.CancelledError, PulseCancelled):
            self._emit(tracker.finish("cancelled", error="cancelled"))
            raise
        except ModelError as exc:
            record = tracker.finish("error", error=exc.detail)
            self._emit(record)
            if exc.playbook is None and exc.node is None:
                located = type(exc)(
                    exc.detail, playbook=request.playbook, node=request.node, record=record
                )
                raise located from exc.__cause__
            exc.record = record
            raise
        except (SeaError, MemoryStoreError) as exc:
            raise self._failed(tracker, request, str(exc)) from exc
        except Exception as exc:  # the provider's own failure, with its type and message
            problem = f"model {tracker.model!r} failed: {type(exc).__name__}: {exc}"
            raise self._failed(tracker, request, problem) from exc

    async def _run(
        self, request: LLMRequest, tracker: CallTracker, on_token: TokenCallback | None
    ) -> LLMResult:
        model = self._models.select(request.profile, request.model_type)
        tracker.model = model_name(model)
        tracker.messages = await asyncio.to_thread(self._messages, request)  # store I/O
        config: RunnableConfig = {
            "metadata": {
                "sea_playbook": request.playbook,
                "sea_node": request.node,
                "sea_pulse_id": request.pulse_id,
            }
        }
        if request.response_schema is not None:
            if request.tools:
                raise ModelError("a node cannot ask for both a response_schema and tools")
            return await self._structured(model, request, tracker, config)
        return await self._plain(model, request, tracker, config, on_token)

    def _messages(self, request: LLMRequest) -> list[BaseMessage]:
        return build_messages(
            self._store,
            request.persona,
            profile=request.profile or DEFAULT_CONTEXT_PROFILE,
            pulse_id=request.pulse_id,
            scope=request.scope,
            prompt=request.prompt,
            budget=self._budget,
        )

    async def _structured(
        self,
        model: BaseChatModel,
        request: LLMRequest,
        tracker: CallTracker,
        config: RunnableConfig,
    ) -> LLMResult:
        assert request.response_schema is not None
        schema = with_playbook_enum(request.response_schema, request.playbook_enum)
        schema_problem = self._schema_problem(schema)
        if schema_problem is not None:
            raise StructuredOutputError(
                f"response_schema is not a valid JSON Schema: {schema_problem}"
            )
        outcome = StructuredOutcome(usage=tracker.usage)
        try:
            await run_structured(
                model,
                tracker.messages,
                schema,
                config=config,
                max_retries=self._max_retries,
                outcome=outcome,
                memory=self._models.structured,
                check=request.check,
            )
        finally:
            tracker.messages = outcome.messages or tracker.messages
            tracker.attempts = [attempt.answer for attempt in outcome.attempts]
        tracker.warnings.extend(f"structured output method refused: {r}" for r in outcome.refused)
        if outcome.method == "prompt":
            tracker.warnings.append("no native structured output: JSON extracted from the text")
        elif outcome.method == "json_mode":
            tracker.warnings.append("structured output in JSON mode: the schema was in the prompt")
        if not outcome.accepted:
            raise StructuredOutputError(
                f"the answer did not match response_schema after {len(outcome.attempts)} "
                f"attempt(s): {outcome.problem}"
            )
        record = self._ok(tracker, outcome.value)
        return LLMResult(text=outcome.text, parsed=outcome.value, tool_call=None, record=record)

    async def _plain(
        self,
        model: BaseChatModel,
        request: LLMRequest,
        tracker: CallTracker,
        config: RunnableConfig,
        on_token: TokenCallback | None,
    ) -> LLMResult:
        runnable = _with_tools(model, request.tools, tracker.model)
        if request.stream:
            message: AIMessage = await _stream(runnable, tracker, config, on_token)
        else:
            message = await runnable.ainvoke(tracker.messages, config=config)
        text = str(message.text)
        if message.usage_metadata:
            tracker.usage.add(message)
        else:  # e.g. a server that sends no usage while streaming: an estimate, said so
            tracker.usage.tokens_in += estimate_tokens(str(m.text) for m in tracker.messages)
            tracker.usage.tokens_out += estimate_tokens([text])
            tracker.warnings.append(ESTIMATED_TOKENS)
        tool_call = _tool_call(message, request.tools, tracker)
        if tool_call is None and not text:
            tracker.warnings.append("the model returned an empty answer")
        response: Any = text
        if tool_call is not None:
            response = {"tool_calls": [tool_call.to_json()], "content": text}
        record = self._ok(tracker, response)
        return LLMResult(text=text, parsed=None, tool_call=tool_call, record=record)

    def _schema_problem(self, schema: Mapping[str, Any]) -> str | None:
        key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS, default=str)
        if key not in self._checked_schemas:  # checking a schema costs more than a call
            self._checked_schemas[key] = check_schema(schema)
        return self._checked_schemas[key]

    def _ok(self, tracker: CallTracker, response: Any) -> LLMCallRecord:
        record = tracker.finish("ok", response)
        self._emit(record)
        return record

    def _failed(self, tracker: CallTracker, request: LLMRequest, problem: str) -> ModelError:
        record = tracker.finish("error", error=problem)
        self._emit(record)
        return ModelError(problem, playbook=request.playbook, node=request.node, record=record)

    def _emit(self, record: LLMCallRecord) -> None:
        if self._on_record is not None:
            self._on_record(record)


ESTIMATED_TOKENS = "token counts estimated: the provider reported none"
"""The warning of a record whose token counts are estimates (about four characters each)."""


def estimate_tokens(texts: Iterable[str]) -> int:
    """About how many tokens ``texts`` hold (four characters a token, at least one each)."""
    return sum(max(1, -(-len(text) // 4)) for text in texts)


def _with_tools(
    model: BaseChatModel, tools: Sequence[BaseTool], name: str
) -> Runnable[Any, AIMessage]:
    if not tools:
        return model
    try:
        return model.bind_tools(list(tools))
    except NotImplementedError as exc:
        raise ModelError(f"model {name!r} cannot call tools (the node offers tools)") from exc


async def _stream(
    runnable: Runnable[Any, Any],
    tracker: CallTracker,
    config: RunnableConfig,
    on_token: TokenCallback | None,
) -> AIMessage:
    total: AIMessage | None = None
    async for chunk in runnable.astream(tracker.messages, config=config):
        if not isinstance(chunk, AIMessage):
            raise ModelError(f"model {tracker.model!r} streamed {type(chunk).__name__}, not text")
        if isinstance(chunk, AIMessageChunk) and isinstance(total, AIMessageChunk):
            total = total + chunk
        else:  # the first chunk, or a whole answer from a model that cannot stream
            total = chunk
        text = str(chunk.text)
        if text:
            tracker.partial_text += text
            if on_token is not None:
                await on_token(text)
    if total is None:
        return AIMessage(content="")
    return AIMessage(
        content=total.content,
        tool_calls=total.tool_calls,
        usage_metadata=total.usage_metadata,
    )


def _tool_call(
    message: AIMessage, tools: Sequence[BaseTool], tracker: CallTracker
) -> ToolCallRequest | None:
    if not message.tool_calls:
        return None
    first = message.tool_calls[0]
    offered = [tool.name for tool in tools]
    if first["name"] not in offered:
        known = ", ".join(offered) or "none"
        raise ModelError(
            f"the model called tool {first['name']!r}, which was not offered ({known})"
        )
    if len(message.tool_calls) > 1:
        extra = ", ".join(c["name"] for c in message.tool_calls[1:])
        tracker.warnings.append(
            f"the model asked for several tool calls; only the first runs ({extra} ignored)"
        )
    call_id = first.get("id") or f"call_{uuid.uuid4().hex[:12]}"
    return ToolCallRequest(name=first["name"], args=dict(first["args"]), id=call_id)
