"""One model's try at a call: a structured answer, or text (streamed or not) with an optional
tool call. The call path (:mod:`sea.llm.call`) runs one try per model of its chain.

A try adds what it used to the call's :class:`~sea.llm.records.CallTracker` (tokens, the
messages sent, attempts, warnings) whether it succeeds or fails, so a failed try is still
counted and recorded.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool

from sea.llm.errors import ModelError, StructuredOutputError
from sea.llm.messages import estimate_tokens
from sea.llm.records import CallTracker, ToolCallRequest
from sea.llm.structured import (
    MethodMemory,
    StructuredOutcome,
    Usage,
    answer_too_large,
    run_structured,
)

TokenCallback = Callable[[str], Awaitable[None]]
AnswerCheck = Callable[[Any], "str | None"]

ESTIMATED_TOKENS = "token counts estimated: the provider reported none"
"""The warning of a record whose token counts are estimates (about four characters each)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a successful try produced.

    Attributes:
        text: The answer's text (for a structured answer, the model's raw text).
        parsed: The validated object of a structured answer.
        tool_call: The tool call the model chose, if it chose one.
        response: The answer in the record's form.
    """

    text: str
    parsed: Any | None
    tool_call: ToolCallRequest | None
    response: Any


@dataclass(frozen=True, slots=True)
class StructuredAsk:
    """How a structured answer is asked for (the same on every model of the chain)."""

    schema: Mapping[str, Any]
    max_retries: int
    memory: MethodMemory
    check: AnswerCheck | None
    max_answer_chars: int | None


async def ask_structured(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    ask: StructuredAsk,
    tracker: CallTracker,
    usage: Usage,
    config: RunnableConfig,
) -> Answer:
    """Ask ``model`` for a value of ``ask.schema`` (retrying rejected answers).

    Raises:
        StructuredOutputError: no answer matched after every retry.
    """
    outcome = StructuredOutcome(usage=usage)
    try:
        await run_structured(
            model,
            messages,
            ask.schema,
            config=config,
            max_retries=ask.max_retries,
            outcome=outcome,
            memory=ask.memory,
            check=ask.check,
            max_answer_chars=ask.max_answer_chars,
        )
    finally:
        tracker.messages = outcome.messages or list(messages)
        record = tracker.record
        record.attempts.extend(attempt.answer for attempt in outcome.attempts)
        tracker.record = replace(
            record, retries=record.retries + max(0, len(outcome.attempts) - 1))
    warnings = tracker.record.warnings
    warnings.extend(f"structured output method refused: {r}" for r in outcome.refused)
    if outcome.method == "prompt":
        warnings.append("no native structured output: JSON extracted from the text")
    elif outcome.method == "json_mode":
        warnings.append("structured output in JSON mode: the schema was in the prompt")
    if not outcome.accepted:
        raise StructuredOutputError(
            f"the answer did not match response_schema after {len(outcome.attempts)} "
            f"attempt(s): {outcome.problem}"
        )
    return Answer(outcome.text, outcome.value, None, outcome.value)


async def ask_plain(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    tools: Sequence[BaseTool],
    tracker: CallTracker,
    usage: Usage,
    config: RunnableConfig,
    *,
    stream: bool,
    on_token: TokenCallback | None,
    limit: int | None,
) -> Answer:
    """Ask ``model`` for text (streamed when ``stream``), or a call of one of ``tools``."""
    tracker.messages = list(messages)
    runnable = _with_tools(model, tools, tracker.record.model)
    if stream:
        message: AIMessage = await _stream(runnable, tracker, config, on_token, limit)
    else:
        message = await runnable.ainvoke(list(messages), config=config)
    text = str(message.text)
    if limit is not None and len(text) > limit:
        raise answer_too_large(limit)
    if message.usage_metadata:
        usage.add(message)
    else:  # e.g. a server that sends no usage while streaming: an estimate, said so
        usage.tokens_in += estimate_tokens(str(m.text) for m in messages)
        usage.tokens_out += estimate_tokens([text])
        tracker.record.warnings.append(ESTIMATED_TOKENS)
    tool_call = _tool_call(message, tools, tracker)
    if tool_call is None and not text:
        tracker.record.warnings.append("the model returned an empty answer")
    response: Any = text
    if tool_call is not None:
        response = {"tool_calls": [tool_call.to_json()], "content": text}
    return Answer(text, None, tool_call, response)


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
    limit: int | None = None,
) -> AIMessage:
    whole: AIMessage | None = None  # a whole answer, from a model that cannot stream
    run: list[AIMessageChunk] = []  # the chunks since, merged once at the end
    async for chunk in runnable.astream(tracker.messages, config=config):
        if not isinstance(chunk, AIMessage):
            raise ModelError(
                f"model {tracker.record.model!r} streamed {type(chunk).__name__}, not text")
        if isinstance(chunk, AIMessageChunk):
            whole = None
            run.append(chunk)
        else:
            whole, run = chunk, []
        content = chunk.content
        text = content if isinstance(content, str) else str(chunk.text)
        if text:
            tracker.partial_text += text
            if limit is not None and len(tracker.partial_text) > limit:
                raise answer_too_large(limit)  # the rest of the stream is not read
            if on_token is not None:
                await on_token(text)
    total = whole if whole is not None else (
        add_ai_message_chunks(run[0], *run[1:]) if run else None)
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
        tracker.record.warnings.append(
            f"the model asked for several tool calls; only the first runs ({extra} ignored)"
        )
    call_id = first.get("id") or f"call_{uuid.uuid4().hex[:12]}"
    return ToolCallRequest(name=first["name"], args=dict(first["args"]), id=call_id)
