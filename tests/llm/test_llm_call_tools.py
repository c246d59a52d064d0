"""The LLM call path: tool calls offered to and returned by the model."""

from __future__ import annotations

import pytest

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.llm.errors import ModelError
from tests.llm.fakes import (
    TextOnlyModel,
    caller_for,
    lookup,
    request,
    run,
)


def test_tool_call_is_returned(store: SQLiteStore, persona: Persona) -> None:
    entry = {"tool_calls": [{"name": "lookup", "args": {"query": "Basho"}}], "content": "Looking."}
    model = ScriptedChatModel(responses={"pb.n": [entry]})
    result = run(caller_for(store, model).call(request(persona, tools=[lookup])))
    assert result.tool_call is not None
    assert (result.tool_call.name, result.tool_call.args) == ("lookup", {"query": "Basho"})
    assert result.tool_call.id
    assert result.text == "Looking."
    assert result.record.response == {
        "tool_calls": [{"name": "lookup", "args": {"query": "Basho"}, "id": result.tool_call.id}],
        "content": "Looking.",
    }


def test_streamed_tool_call_is_returned(store: SQLiteStore, persona: Persona) -> None:
    entry = {"tool_calls": [{"name": "lookup", "args": {"query": "Issa"}}]}
    model = ScriptedChatModel(default=[entry])
    result = run(caller_for(store, model).call(request(persona, tools=[lookup], stream=True)))
    assert result.tool_call is not None and result.tool_call.args == {"query": "Issa"}


def test_text_answer_in_tool_mode_has_no_tool_call(store: SQLiteStore, persona: Persona) -> None:
    model = ScriptedChatModel(default=["No tool needed."])
    result = run(caller_for(store, model).call(request(persona, tools=[lookup])))
    assert result.tool_call is None and result.text == "No tool needed."


def test_a_tool_that_was_not_offered_is_an_error(store: SQLiteStore, persona: Persona) -> None:
    entry = {"tool_calls": [{"name": "delete_everything", "args": {}}]}
    model = ScriptedChatModel(default=[entry])
    with pytest.raises(ModelError, match="'delete_everything', which was not offered \\(lookup\\)"):
        run(caller_for(store, model).call(request(persona, tools=[lookup])))


def test_several_tool_calls_keep_the_first_and_warn(store: SQLiteStore, persona: Persona) -> None:
    entry = {
        "tool_calls": [
            {"name": "lookup", "args": {"query": "a"}},
            {"name": "lookup", "args": {"query": "b"}},
        ]
    }
    model = ScriptedChatModel(default=[entry])
    result = run(caller_for(store, model).call(request(persona, tools=[lookup])))
    assert result.tool_call is not None and result.tool_call.args == {"query": "a"}
    assert result.record.warnings == [
        "the model asked for several tool calls; only the first runs (lookup ignored)"
    ]


def test_a_model_without_tool_support_is_an_error(store: SQLiteStore, persona: Persona) -> None:
    model = TextOnlyModel(answers=["x"], seen=[])
    with pytest.raises(ModelError, match="cannot call tools"):
        run(caller_for(store, model).call(request(persona, tools=[lookup])))
