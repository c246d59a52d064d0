"""A streamed answer is merged once at its end: the same message as adding the chunks one by
one (text, tool-call pieces, usage), and a whole answer among the chunks wins as before."""

from __future__ import annotations

import asyncio
import functools
import operator
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk

from sea.llm.attempt import _stream
from sea.llm.records import CallTracker


def _chunks() -> list[AIMessageChunk]:
    return [
        AIMessageChunk(content="Hel", id="run-1"),
        AIMessageChunk(content="lo, ", usage_metadata={
            "input_tokens": 3, "output_tokens": 1, "total_tokens": 4}),
        AIMessageChunk(content="", tool_call_chunks=[
            tool_call_chunk(name="send_mail", args='{"to": ', id="c1", index=0)]),
        AIMessageChunk(content="", tool_call_chunks=[
            tool_call_chunk(name=None, args='"dave"}', id=None, index=0)]),
        AIMessageChunk(content="world", usage_metadata={
            "input_tokens": 0, "output_tokens": 2, "total_tokens": 2}),
    ]


class Streaming:
    """A model's stream: the items given, in order."""

    def __init__(self, items: list[AIMessage]) -> None:
        self._items = items

    async def astream(self, messages: Any, config: Any = None) -> AsyncIterator[AIMessage]:
        for item in self._items:
            yield item


def _streamed(items: list[AIMessage]) -> tuple[AIMessage, list[str]]:
    tokens: list[str] = []

    async def on_token(text: str) -> None:
        tokens.append(text)

    tracker = CallTracker("pb", "n", time.perf_counter)
    found = asyncio.run(_stream(Streaming(items), tracker, {}, on_token))  # type: ignore[arg-type]
    return found, tokens


def _expected(total: AIMessage) -> AIMessage:
    return AIMessage(content=total.content, tool_calls=total.tool_calls,
                     usage_metadata=total.usage_metadata)


def test_chunks_merged_once_make_the_message_their_sum_makes() -> None:
    chunks = _chunks()
    found, tokens = _streamed(list(chunks))
    assert found == _expected(functools.reduce(operator.add, chunks))
    assert found.content == "Hello, world"
    assert found.tool_calls == [
        {"name": "send_mail", "args": {"to": "dave"}, "id": "c1", "type": "tool_call"}]
    assert found.usage_metadata is not None and found.usage_metadata["output_tokens"] == 3
    assert tokens == ["Hel", "lo, ", "world"]


@pytest.mark.parametrize("whole_at", [0, 2, 5])
def test_a_whole_answer_replaces_the_chunks_before_it(whole_at: int) -> None:
    chunks: list[AIMessage] = list(_chunks())
    whole = AIMessage(content="whole")
    items = [*chunks[:whole_at], whole, *chunks[whole_at:]]
    found, _ = _streamed(items)
    after = chunks[whole_at:]
    expected = functools.reduce(operator.add, after) if after else whole
    assert found == _expected(expected)
