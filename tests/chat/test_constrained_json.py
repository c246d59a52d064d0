"""The grammar's schema is a narrowed copy; constrained output is parsed and checked."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from sea.chat.constrain import parse_structured, tighten_schema
from sea.chat.errors import StructuredOutputParseError

ROUTER = {
    "type": "object",
    "properties": {
        "playbook": {"type": "string", "enum": ["basic_chat", "memory_recall"]},
        "args": {"type": "object", "properties": {"query": {"type": "string", "maxLength": 80}}},
        "reason": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "extra": {"type": "object"},
    },
    "required": ["playbook", "reason"],
}


def test_tighten_bounds_strings_arrays_and_objects_without_touching_the_original() -> None:
    tight = tighten_schema(ROUTER, max_string_length=100, max_items=4)
    props = tight["properties"]
    assert props["reason"]["maxLength"] == 100
    assert props["args"]["properties"]["query"]["maxLength"] == 80  # an existing bound stays
    assert "maxLength" not in props["playbook"]  # enums are already bounded
    assert props["tags"]["maxItems"] == 4
    assert props["tags"]["items"]["maxLength"] == 100
    assert tight["additionalProperties"] is False
    assert props["args"]["additionalProperties"] is False
    assert props["extra"] == {"type": "object", "additionalProperties": False, "properties": {}}
    assert "maxLength" not in ROUTER["properties"]["reason"]  # type: ignore[index]


def test_tighten_walks_combinators_and_defs() -> None:
    schema = {
        "$defs": {"name": {"type": "string"}},
        "anyOf": [{"type": "string"}, {"type": ["string", "null"]}],
    }
    tight = tighten_schema(schema, max_string_length=7, max_items=2)
    assert tight["$defs"]["name"]["maxLength"] == 7
    assert [branch["maxLength"] for branch in tight["anyOf"]] == [7, 7]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=200),
    lambda inner: st.lists(inner, max_size=10) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=20,
)


@given(_json_values)
def test_whatever_the_tightened_schema_accepts_the_original_accepts(value: Any) -> None:
    tight = tighten_schema(ROUTER, max_string_length=20, max_items=3)
    if Draft202012Validator(tight).is_valid(value):
        assert Draft202012Validator(ROUTER).is_valid(value)


def test_parse_accepts_raw_newlines_inside_strings() -> None:
    text = '{"playbook": "basic_chat", "reason": "line one\nline two"}'
    assert parse_structured(text, ROUTER, finish_reason="stop")["reason"] == "line one\nline two"


def test_parse_reports_output_cut_at_the_token_limit() -> None:
    with pytest.raises(StructuredOutputParseError, match="cut off at the max_tokens limit") as info:
        parse_structured('{"playbook": "basic_chat", "reas', ROUTER, finish_reason="length")
    assert info.value.code == "SEA581"


def test_parse_reports_where_the_value_breaks_the_schema() -> None:
    with pytest.raises(StructuredOutputParseError, match="at playbook: 'chat' is not one of"):
        parse_structured('{"playbook": "chat", "reason": "x"}', ROUTER, finish_reason="stop")
    with pytest.raises(StructuredOutputParseError, match=r"\(root\): 'reason' is a required"):
        parse_structured('{"playbook": "basic_chat"}', ROUTER, finish_reason="stop")
