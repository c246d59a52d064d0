"""The structured-output runnable binds a grammar schema and parses what the model says."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import AIMessage
from pydantic import BaseModel

from sea.chat.errors import StructuredOutputParseError
from sea.chat.llama_structured import structured_runnable
from sea.errors import UsageError

SCHEMA = {
    "type": "object",
    "properties": {"playbook": {"type": "string", "enum": ["basic_chat", "memory_recall"]}},
    "required": ["playbook"],
}


class Route(BaseModel):
    playbook: str
    confidence: float


def _runnable(answer: str, schema: Any, *, include_raw: bool) -> Any:
    model = FakeListChatModel(responses=[answer])
    return structured_runnable(
        model, schema, include_raw=include_raw, max_tokens=64, max_string_length=20, max_items=3
    )


def test_include_raw_gives_raw_parsed_and_no_error() -> None:
    result = _runnable('{"playbook": "memory_recall"}', SCHEMA, include_raw=True).invoke("hi")
    assert isinstance(result["raw"], AIMessage)
    assert result["raw"].content == '{"playbook": "memory_recall"}'
    assert result["parsed"] == {"playbook": "memory_recall"}
    assert result["parsing_error"] is None


def test_include_raw_reports_an_answer_outside_the_schema() -> None:
    result = _runnable('{"playbook": "other"}', SCHEMA, include_raw=True).invoke("hi")
    assert result["parsed"] is None
    assert isinstance(result["parsing_error"], StructuredOutputParseError)
    assert "'other' is not one of" in str(result["parsing_error"])


def test_without_include_raw_the_value_or_the_error() -> None:
    assert _runnable('{"playbook": "basic_chat"}', SCHEMA, include_raw=False).invoke("x") == {
        "playbook": "basic_chat"
    }
    with pytest.raises(StructuredOutputParseError, match="not valid JSON"):
        _runnable("sure! here it is", SCHEMA, include_raw=False).invoke("x")


def test_pydantic_classes_give_instances() -> None:
    answer = '{"playbook": "basic_chat", "confidence": 0.5}'
    assert _runnable(answer, Route, include_raw=False).invoke("x") == Route(
        playbook="basic_chat", confidence=0.5
    )
    bad = _runnable('{"playbook": "basic_chat"}', Route, include_raw=True).invoke("x")
    assert bad["parsed"] is None and "confidence" in str(bad["parsing_error"])


def test_other_schema_kinds_are_refused() -> None:
    with pytest.raises(UsageError, match="JSON Schema dict or a pydantic model class"):
        _runnable("{}", list, include_raw=True)


class _RecordingChat(FakeListChatModel):
    """A fake chat model that keeps the call options it was given."""

    seen: list[dict[str, Any]] = []

    def _call(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> str:
        self.seen.append(kwargs)
        return super()._call(messages, stop, run_manager, **kwargs)


def test_the_model_gets_the_tightened_schema_and_the_token_cap() -> None:
    model = _RecordingChat(responses=['{"playbook": "basic_chat"}'], seen=[])
    schema = {"type": "object", "properties": {"reason": {"type": "string"}}}
    runnable = structured_runnable(
        model, schema, include_raw=True, max_tokens=64, max_string_length=20, max_items=3
    )
    runnable.invoke("hi")
    (options,) = model.seen
    assert options["max_tokens"] == 64
    assert options["response_format"]["type"] == "json_object"
    sent = options["response_format"]["schema"]
    assert sent["properties"]["reason"]["maxLength"] == 20
    assert sent["additionalProperties"] is False
    assert "maxLength" not in schema["properties"]["reason"]  # type: ignore[index]
