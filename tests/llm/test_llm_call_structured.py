"""The LLM call path: structured answers, parsed, validated and retried."""

from __future__ import annotations

import json

import pytest

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.llm.errors import ModelError, StructuredOutputError
from tests.llm.fakes import (
    ROUTER_SCHEMA,
    Recorder,
    TextOnlyModel,
    ToolCallingModel,
    caller_for,
    lookup,
    request,
    run,
)


def test_structured_answer_is_parsed_and_validated(store: SQLiteStore, persona: Persona) -> None:
    answer = {"playbook": "basic_chat", "reason": "small talk"}
    model = ScriptedChatModel(responses={"pb.n": [answer]})
    result = run(caller_for(store, model).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == answer
    assert json.loads(result.text) == answer
    assert result.record.response == answer
    assert result.record.attempts == [answer]
    assert result.record.retries == 0 and result.record.warnings == []


def test_invalid_answer_is_retried_with_what_was_wrong(
    store: SQLiteStore, persona: Persona
) -> None:
    bad, good = {"playbook": "basic_chat"}, {"playbook": "basic_chat", "reason": "ok"}
    model = ScriptedChatModel(responses={"pb.n": [bad, good]})
    result = run(caller_for(store, model).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == good
    assert result.record.retries == 1
    assert result.record.attempts == [bad, good]
    second = model.calls[1].messages
    assert second[:-2] == model.calls[0].messages
    assert second[-2] == {"role": "assistant", "content": json.dumps(bad, separators=(",", ":"))}
    assert second[-1]["role"] == "user"
    assert "could not be used: 'reason' is a required property" in second[-1]["content"]
    assert result.record.messages == second


def test_text_that_is_not_json_is_retried(store: SQLiteStore, persona: Persona) -> None:
    good = {"playbook": "basic_chat", "reason": "ok"}
    model = ScriptedChatModel(responses={"pb.n": ["I pick basic_chat.", good]})
    result = run(caller_for(store, model).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == good
    retry = model.calls[1].messages[-1]["content"]
    assert "the answer contained no JSON value" in retry


def test_retries_are_bounded_then_a_structured_output_error(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    model = ScriptedChatModel(responses={"pb.n": [{"playbook": 1}] * 3 + ["spare"]})
    caller = caller_for(store, model, recorder, max_retries=2)
    with pytest.raises(StructuredOutputError) as caught:
        run(caller.call(request(persona, response_schema=ROUTER_SCHEMA)))
    error = caught.value
    assert error.code == "SEA521" and (error.playbook, error.node) == ("pb", "n")
    assert "after 3 attempt(s)" in str(error)
    assert "at /playbook: 1 is not of type 'string'" in str(error)
    assert error.record is not None
    assert error.record.outcome == "error" and error.record.retries == 2
    assert error.record.error == error.detail
    assert error.record.tokens_out > 0
    assert len(model.calls) == 3 and model.remaining("pb.n") == 1
    assert recorder.records == [error.record]


def test_zero_retries_fails_on_the_first_bad_answer(store: SQLiteStore, persona: Persona) -> None:
    model = ScriptedChatModel(responses={"pb.n": [{"playbook": 1}]})
    with pytest.raises(StructuredOutputError, match="after 1 attempt"):
        run(
            caller_for(store, model, max_retries=0).call(
                request(persona, response_schema=ROUTER_SCHEMA)
            )
        )


def test_invalid_response_schema_is_reported(store: SQLiteStore, persona: Persona) -> None:
    model = ScriptedChatModel(default=[{"a": 1}])
    caller = caller_for(store, model)
    for _ in range(2):  # the verdict on a schema is kept, and still reported
        with pytest.raises(StructuredOutputError, match="not a valid JSON Schema"):
            run(caller.call(request(persona, response_schema={"type": "int"})))
    assert model.calls == []


def test_extraction_path_for_a_model_without_native_structured_output(
    store: SQLiteStore, persona: Persona
) -> None:
    fenced = 'Sure.\n```json\n{"playbook": "basic_chat", "reason": "chat"}\n```'
    model = TextOnlyModel(answers=["I do not know.", fenced], seen=[])
    result = run(caller_for(store, model).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == {"playbook": "basic_chat", "reason": "chat"}
    assert result.text == fenced
    first = model.seen[0]
    assert "Answer with only a JSON value that matches this JSON Schema" in str(first[-1].content)
    assert '"required":["playbook","reason"]' in str(first[-1].content)
    assert "the answer contained no JSON value" in str(model.seen[1][-1].content)
    record = result.record
    assert record.retries == 1 and record.tokens_in == 14 and record.tokens_out == 6
    assert record.model == "text-only"
    assert record.warnings == ["no native structured output: JSON extracted from the text"]


def test_router_enum_is_injected_and_enforced(store: SQLiteStore, persona: Persona) -> None:
    answers = [
        '{"playbook": "web_search", "reason": "x"}',
        '{"playbook": "memory_recall", "reason": "y"}',
    ]
    model = TextOnlyModel(answers=answers, seen=[])
    names = ["basic_chat", "memory_recall"]
    req = request(persona, profile="router", response_schema=ROUTER_SCHEMA, playbook_enum=names)
    result = run(caller_for(store, model).call(req))
    assert result.parsed == {"playbook": "memory_recall", "reason": "y"}
    instruction = str(model.seen[0][-1].content)
    assert '"enum":["basic_chat","memory_recall"]' in instruction
    retry = str(model.seen[1][-1].content)
    assert "'web_search' is not one of ['basic_chat', 'memory_recall']" in retry
    assert "enum" not in ROUTER_SCHEMA["properties"]["playbook"]


def test_structured_answers_are_not_streamed(store: SQLiteStore, persona: Persona) -> None:
    tokens: list[str] = []

    async def on_token(text: str) -> None:
        tokens.append(text)

    model = ScriptedChatModel(default=[{"playbook": "a", "reason": "b"}])
    req = request(persona, response_schema=ROUTER_SCHEMA, stream=True)
    result = run(caller_for(store, model).call(req, on_token=on_token))
    assert result.parsed == {"playbook": "a", "reason": "b"}
    assert tokens == []


def test_schema_and_tools_together_are_refused(store: SQLiteStore, persona: Persona) -> None:
    model = ScriptedChatModel(default=["x"])
    req = request(persona, response_schema=ROUTER_SCHEMA, tools=[lookup])
    with pytest.raises(ModelError, match="both a response_schema and tools") as caught:
        run(caller_for(store, model).call(req))
    assert (caught.value.playbook, caught.value.node) == ("pb", "n")
    assert caught.value.record is not None and caught.value.record.outcome == "error"



def test_native_structured_output_through_a_tool_call(store: SQLiteStore, persona: Persona) -> None:
    bad, good = {"playbook": "basic_chat"}, {"playbook": "basic_chat", "reason": "chat"}
    model = ToolCallingModel(arguments=[bad, good], offered=[])
    result = run(caller_for(store, model).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == good
    function = model.offered[0][0]["function"]
    assert function["name"] == "structured_answer"
    assert function["parameters"]["required"] == ["playbook", "reason"]
    assert result.record.attempts == [bad, good]
    assistant, retry = result.record.messages[-2:]
    assert assistant == {"role": "assistant", "content": '{"playbook":"basic_chat"}'}
    assert "'reason' is a required property" in retry["content"]
