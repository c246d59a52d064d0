"""The scripted chat model: keyed responses, defaults, streaming, tools, structured output."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessageChunk, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool

from sea.chat.scripted import ScriptedChatModel
from sea.errors import UsageError
from sea.llm.errors import ModelError, ScriptExhausted


def node(playbook: str, node_id: str) -> dict[str, Any]:
    return {"metadata": {"sea_playbook": playbook, "sea_node": node_id}}


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


def test_responses_are_keyed_by_playbook_node_and_consumed_in_order() -> None:
    model = ScriptedChatModel(
        responses={"chat.answer": ["first", "second"], "chat.other": ["other"]},
        default=["fallback"],
    )
    said = [model.invoke("hi", config=node("chat", "answer")).content for _ in range(3)]
    assert said == ["first", "second", "fallback"]
    assert model.invoke("hi", config=node("chat", "other")).content == "other"
    assert [call.key for call in model.calls] == ["chat.answer"] * 3 + ["chat.other"]


def test_a_call_without_node_metadata_uses_the_default_list() -> None:
    model = ScriptedChatModel(responses={"chat.answer": ["keyed"]}, default=["d1"])
    assert model.invoke("hi").content == "d1"
    assert model.remaining("chat.answer") == 1
    assert model.remaining() == 0


def test_running_out_names_the_node() -> None:
    model = ScriptedChatModel(responses={"chat.answer": ["only"]})
    model.invoke("hi", config=node("chat", "answer"))
    with pytest.raises(ScriptExhausted) as caught:
        model.invoke("again", config=node("chat", "answer"))
    assert "'chat.answer'" in str(caught.value)
    assert caught.value.playbook == "chat" and caught.value.node == "answer"
    assert caught.value.code == "SEA522"
    assert isinstance(caught.value, ModelError)


def test_calls_record_the_messages_sent() -> None:
    model = ScriptedChatModel(default=["ok"])
    model.invoke([SystemMessage("sys"), HumanMessage("question")])
    assert model.calls[0].messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "question"},
    ]
    assert model.calls[0].response == "ok"


def test_usage_metadata_counts_tokens_from_the_text() -> None:
    model = ScriptedChatModel(default=["x" * 40])
    answer = model.invoke([HumanMessage("y" * 80)])
    usage = answer.usage_metadata
    assert usage is not None
    assert usage["output_tokens"] == 10
    assert usage["input_tokens"] == 4 + 20
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_async_streaming_yields_word_chunks_and_usage_on_the_last() -> None:
    model = ScriptedChatModel(responses={"pb.speak": ["Hello there, friend."]})

    async def collect() -> list[AIMessageChunk]:
        return [c async for c in model.astream("hi", config=node("pb", "speak"))]

    chunks = asyncio.run(collect())
    assert [c.text for c in chunks if c.text] == ["Hello ", "there, ", "friend."]
    assert chunks[-1].usage_metadata is not None
    assert all(c.usage_metadata is None for c in chunks[:-1])
    assert model.calls[0].key == "pb.speak"


def test_sync_streaming_reads_the_node_too() -> None:
    model = ScriptedChatModel(responses={"pb.speak": ["a b"]}, default=["wrong"])
    text = "".join(str(c.text) for c in model.stream("hi", config=node("pb", "speak")))
    assert text == "a b"


def test_tool_call_response_needs_bound_tools() -> None:
    entry = {"tool_calls": [{"name": "lookup", "args": {"query": "cats"}}], "content": "let me"}
    model = ScriptedChatModel(default=[entry, entry])
    with pytest.raises(ModelError, match="offered no tools"):
        model.invoke("hi")
    answer = model.bind_tools([lookup]).invoke("hi")
    assert answer.content == "let me"
    assert [(c["name"], c["args"]) for c in answer.tool_calls] == [("lookup", {"query": "cats"})]
    assert answer.tool_calls[0]["id"]


def test_streamed_tool_call_aggregates() -> None:
    entry = {"tool_calls": [{"name": "lookup", "args": {"query": "dogs"}}]}
    model = ScriptedChatModel(default=[entry])
    total: Any = None
    for chunk in model.bind_tools([lookup]).stream("hi"):
        total = chunk if total is None else total + chunk
    assert total.tool_calls[0]["name"] == "lookup"
    assert total.tool_calls[0]["args"] == {"query": "dogs"}


def test_structured_output_returns_the_object_with_raw() -> None:
    model = ScriptedChatModel(responses={"pb.decide": [{"playbook": "basic_chat"}]})
    runnable = model.with_structured_output({"type": "object"}, include_raw=True)
    result = runnable.invoke("hi", config=node("pb", "decide"))
    assert result["parsed"] == {"playbook": "basic_chat"}
    assert result["parsing_error"] is None
    assert json.loads(result["raw"].content) == {"playbook": "basic_chat"}
    assert result["raw"].usage_metadata["output_tokens"] > 0


def test_structured_output_of_a_text_entry_is_a_parsing_error() -> None:
    model = ScriptedChatModel(default=["not json", "still not json"])
    raw = model.with_structured_output({"type": "object"}, include_raw=True).invoke("hi")
    assert raw["parsed"] is None
    assert isinstance(raw["parsing_error"], OutputParserException)
    with pytest.raises(OutputParserException):
        model.with_structured_output({"type": "object"}).invoke("hi")


def test_metadata_reaches_the_model_inside_a_sequence() -> None:
    model = ScriptedChatModel(responses={"pb.n": ["inner"]}, default=["wrong"])
    chain = RunnableLambda(lambda text: [HumanMessage(text)]) | model
    assert chain.invoke("hi", config=node("pb", "n")).content == "inner"


def test_from_file_reads_a_script(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"responses": {"pb.n": ["from file"]}, "default": ["d"]}))
    model = ScriptedChatModel.from_file(path)
    assert model.invoke("hi", config=node("pb", "n")).content == "from file"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"answers": {}}', "`responses`"),
        ('{"responses": {"pb.n": "one"}}', 'map "playbook.node" to a list'),
        ('{"default": {"a": 1}}', "`default` must be a list"),
        ('{"default": [{"tool_calls": []}]}', "default[0]"),
        ('{"default": [{"tool_calls": [{"args": {}}]}]}', "needs `name`"),
    ],
)
def test_bad_scripts_are_usage_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "script.json"
    path.write_text(content)
    with pytest.raises(UsageError) as caught:
        ScriptedChatModel.from_file(path)
    assert message in str(caught.value)


def test_missing_script_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the model script"):
        ScriptedChatModel.from_file(tmp_path / "absent.json")


def test_japanese_text_streams_in_small_chunks() -> None:
    model = ScriptedChatModel(default=["今日は良い天気です。 Yes!"])
    chunks = [str(c.text) for c in model.stream("hi") if c.text]
    assert chunks == ["今日は", "良い天", "気です", "。 ", "Yes!"]
    assert "".join(chunks) == "今日は良い天気です。 Yes!"
