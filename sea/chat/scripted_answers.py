"""How the scripted model's answers look: messages, stream chunks, structured results.

A script entry (see :mod:`sea.chat.scripted`) becomes an ``AIMessage`` with estimated usage
(about four characters per token), a stream of word-sized chunks, or a structured result
``{"raw", "parsed", "parsing_error"}`` parsed back from the answer's JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGenerationChunk

from sea.llm.errors import ModelError
from sea.llm.messages import usage_metadata

_WIDE = "\u3000-\u9fff\uac00-\ud7af\uff00-\uffef"
_WORD = re.compile(rf"[{_WIDE}]{{1,3}}\s*|[^\s{_WIDE}]+\s*|\s+")
"""Stream chunks: a word with its trailing space; CJK text, which has no spaces, by threes."""
_CHARS_PER_TOKEN = 4
_TOKENS_PER_MESSAGE = 4


def answer(entry: Any, messages: list[BaseMessage], kwargs: Mapping[str, Any]) -> AIMessage:
    """The answer to ``messages`` that a script ``entry`` gives (``kwargs``: the call's).

    Raises:
        ModelError: a tool-call entry answers a call that offered no tools.
    """
    tool_calls: list[dict[str, Any]] = []
    if isinstance(entry, dict) and "tool_calls" in entry:
        if not kwargs.get("tools"):
            raise ModelError(
                "a scripted tool-call response was given to a call that offered no tools"
            )
        content = str(entry.get("content", ""))
        tool_calls = [
            {"name": c["name"], "args": dict(c.get("args", {})), "id": c["id"]}
            for c in entry["tool_calls"]
        ]
    elif isinstance(entry, str):
        content = entry
    else:
        content = orjson.dumps(entry).decode()
    spent = content + "".join(orjson.dumps(c["args"]).decode() for c in tool_calls)
    usage = _usage(messages, spent)
    return AIMessage(content=content, tool_calls=tool_calls, usage_metadata=usage)


def _usage(messages: Sequence[BaseMessage], text: str) -> UsageMetadata:
    tokens_in = sum(_TOKENS_PER_MESSAGE + _tokens(str(m.text)) for m in messages)
    tokens_out = max(1, _tokens(text))
    return usage_metadata(tokens_in, tokens_out)


def _tokens(text: str) -> int:
    return (len(text) + _CHARS_PER_TOKEN - 1) // _CHARS_PER_TOKEN


def chunks(message: AIMessage) -> Iterator[ChatGenerationChunk]:
    """``message`` streamed a word per chunk; usage and tool calls come on the last chunk."""
    words = _WORD.findall(str(message.content))
    for word in words:
        yield ChatGenerationChunk(message=AIMessageChunk(content=word))
    last = AIMessageChunk(
        content="",
        usage_metadata=message.usage_metadata,
        tool_call_chunks=[
            {"name": c["name"], "args": orjson.dumps(c["args"]).decode(), "id": c["id"], "index": i}
            for i, c in enumerate(message.tool_calls)
        ],
        chunk_position="last",
    )
    yield ChatGenerationChunk(message=last)


def parse_structured(raw: AIMessage) -> dict[str, Any]:
    """``{"raw", "parsed", "parsing_error"}``: the answer's text parsed as JSON."""
    text = str(raw.text)
    try:
        return {"raw": raw, "parsed": orjson.loads(text), "parsing_error": None}
    except orjson.JSONDecodeError as exc:
        error = OutputParserException(f"the answer is not JSON: {exc}", llm_output=text)
        return {"raw": raw, "parsed": None, "parsing_error": error}


async def aparse_structured(raw: AIMessage) -> dict[str, Any]:
    """Awaitable :func:`parse_structured`."""
    return parse_structured(raw)  # no thread hop: parsing is quick


def parsed_or_raise(result: dict[str, Any]) -> Any:
    """The parsed value of a structured result, or its parsing error raised."""
    if result["parsing_error"] is not None:
        raise result["parsing_error"]
    return result["parsed"]
