"""Structured-output helpers: JSON extraction, enum injection, validation messages."""

from __future__ import annotations

from typing import Any

import pytest

from sea.llm.structured import (
    check_schema,
    extract_json,
    retry_instruction,
    validation_problem,
    with_playbook_enum,
)

ROUTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"playbook": {"type": "string"}, "reason": {"type": "string"}},
    "required": ["playbook", "reason"],
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  {"a": [1, 2]}\n', {"a": [1, 2]}),
        ('Here you go:\n```json\n{"a": 2}\n```\nDone.', {"a": 2}),
        ('```\n{"a": 3}\n```', {"a": 3}),
        ('I think {"a": 4} is right, not {"a": 5}.', {"a": 4}),
        ('Braces {like this} first, then {"a": 6}', {"a": 6}),
        ("no json here", None),
        ("", None),
    ],
)
def test_extract_json_finds_the_first_object(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


def test_extract_json_finds_an_array_when_asked() -> None:
    assert extract_json('The list: [1, 2] and {"a": 1}', want_array=True) == [1, 2]
    assert extract_json('The list: [1, 2] and {"a": 1}') == {"a": 1}


def test_enum_is_injected_into_a_deep_copy() -> None:
    injected = with_playbook_enum(ROUTER_SCHEMA, ["basic_chat", "memory_recall"])
    assert injected["properties"]["playbook"]["enum"] == ["basic_chat", "memory_recall"]
    assert "enum" not in ROUTER_SCHEMA["properties"]["playbook"]
    assert injected["properties"]["reason"] == ROUTER_SCHEMA["properties"]["reason"]


def test_the_copy_shares_nothing_with_the_schema_even_past_json() -> None:
    schema = {"type": "object", "properties": {"playbook": {"type": "string"},
                                               "n": {"type": "integer", "maximum": 2**70}}}
    for given in (ROUTER_SCHEMA, schema):  # the second is not orjson's JSON (a big integer)
        copied = with_playbook_enum(given, ["basic_chat"])
        copied["properties"]["playbook"]["description"] = "changed"
        copied["properties"].setdefault("reason", {})["changed"] = True
        assert "changed" not in str(given)
    assert with_playbook_enum(schema, None)["properties"]["n"]["maximum"] == 2**70


def test_enum_is_not_injected_without_a_playbook_property_or_names() -> None:
    schema = {"type": "object", "properties": {"queries": {"type": "array"}}}
    assert with_playbook_enum(schema, ["basic_chat"]) == schema
    assert with_playbook_enum(ROUTER_SCHEMA, []) == ROUTER_SCHEMA
    assert with_playbook_enum(ROUTER_SCHEMA, None) == ROUTER_SCHEMA


def test_validation_problem_names_paths_and_causes() -> None:
    problem = validation_problem(ROUTER_SCHEMA, {"playbook": 3})
    assert problem is not None
    assert "'reason' is a required property" in problem
    assert "at /playbook: 3 is not of type 'string'" in problem
    assert validation_problem(ROUTER_SCHEMA, {"playbook": "a", "reason": "b"}) is None


def test_validation_problem_is_bounded() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "string"}}
    problem = validation_problem(schema, {str(i): i for i in range(6)})
    assert problem is not None
    assert problem.endswith("and 3 more problems")


def test_check_schema_reports_an_invalid_schema() -> None:
    assert check_schema(ROUTER_SCHEMA) is None
    problem = check_schema({"type": "int"})
    assert problem is not None and "'int' is not valid" in problem


def test_retry_instruction_says_what_was_wrong_and_shows_the_schema() -> None:
    message = retry_instruction("'reason' is a required property", ROUTER_SCHEMA)
    content = str(message.content)
    assert content.startswith("<system>") and content.endswith("</system>")
    assert "'reason' is a required property" in content
    assert '"required":["playbook","reason"]' in content
