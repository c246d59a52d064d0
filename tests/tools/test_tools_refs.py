"""Refs between pipeline actions: resolution, the normalization rules, and the type guard."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.tools import tool
from pydantic import BaseModel, Field

from sea.engine.tools.arguments import prepare_arguments, tool_schema
from sea.engine.tools.refs import (
    REF_KEYWORD,
    TRUNCATION_NOTE,
    Normalization,
    RefProblem,
    Rule,
    normalize_to_schema,
    ref_keys,
    ref_target,
    resolve_parameters,
    type_guard,
)
from sea.errors import SeaError, ToolArgumentError
from sea.jsontypes import json_type

READ_DOC = {"content": "- buy milk\n", "total_chars": 10, "truncated": False}
PLAN = {"plan_id": "p1", "first_step_id": "s1"}


class Window(BaseModel):
    start: int = Field(ge=0)
    end: int


class PipelineArgs(BaseModel):
    """Arguments like a pydantic-typed tool's: Optional fields become anyOf with null."""

    action_results: list[dict[str, Any]] = []
    prompt_override: str | None = None
    note: str | None = Field(default=None, max_length=60)
    step_id: str = Field(default="", json_schema_extra={REF_KEYWORD: ["step_id", "first_step_id"]})
    count: int = 1
    ratio: float = 1.0
    enabled: bool = False
    window: Window | None = None
    tags: list[str] | None = None
    mode: int | str = 0


SCHEMA: dict[str, Any] = PipelineArgs.model_json_schema()


def resolve(
    parameters: dict[str, Any],
    results: dict[str, Any] | None = None,
    *,
    schema: dict[str, Any] | None = None,
    string_cap: int | None = None,
) -> tuple[dict[str, object], list[Normalization], list[str]]:
    given_results = {"read_doc": READ_DOC, "plan": PLAN} if results is None else results
    return resolve_parameters(
        "respond", schema or SCHEMA, parameters, given_results, string_cap=string_cap
    )


def one(
    parameter: str,
    result: object,
    *,
    schema: dict[str, Any] | None = None,
    string_cap: int | None = None,
) -> tuple[object, Normalization, list[str]]:
    """The argument and the record a ref to ``result`` gives ``parameter``."""
    arguments, records, warnings = resolve(
        {parameter: "ref:earlier"}, {"earlier": result}, schema=schema, string_cap=string_cap
    )
    assert len(records) == 1
    return arguments[parameter], records[0], warnings


def problem(parameter: str, result: object, schema: dict[str, Any] | None = None) -> RefProblem:
    with pytest.raises(RefProblem) as caught:
        resolve({parameter: "ref:earlier"}, {"earlier": result}, schema=schema)
    return caught.value


def string_schema(**keywords: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"text": {"type": "string", **keywords}}}


# --- refs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ref:abc", "abc"),
        ("ref: read_doc ", "read_doc"),
        ("ref:a.b-c_1", "a.b-c_1"),
        ("ref:", None),
        ("ref: see the notes", None),
        ("Ref:abc", None),
        ("abc", None),
        (" ref:abc", None),
        (5, None),
        (None, None),
        (["ref:abc"], None),
    ],
)
def test_ref_target(value: object, expected: str | None) -> None:
    assert ref_target(value) == expected


def test_values_that_are_not_refs_pass_unchanged() -> None:
    parameters = {
        "prompt_override": "ref: see the notes above",
        "count": "not even an integer",
        "tags": ["a", "b"],
        "unknown": {"x": 1},
    }
    assert resolve(parameters) == (parameters, [], [])


def test_unresolved_ref_names_the_action_and_the_known_results() -> None:
    with pytest.raises(RefProblem) as caught:
        resolve({"prompt_override": "ref:read_dco"})
    found = caught.value
    assert (found.parameter, found.ref, found.reason, found.tool) == (
        "prompt_override",
        "read_dco",
        "unresolved",
        "respond",
    )
    assert str(found) == (
        "tool 'respond': argument 'prompt_override' (ref:read_dco): no earlier action "
        "'read_dco' has a result (results so far: read_doc, plan)"
    )


def test_a_ref_for_a_parameter_the_tool_does_not_have_is_a_ref_problem() -> None:
    with pytest.raises(RefProblem) as caught:
        resolve({"promt_override": "ref:read_doc"})
    assert caught.value.reason == "unknown_parameter"
    assert "'promt_override'" in str(caught.value)
    assert "prompt_override" in str(caught.value)  # the known parameters are listed


def test_a_nested_ref_is_refused_with_its_path() -> None:
    with pytest.raises(RefProblem) as caught:
        resolve({"action_results": [{"ok": 1}, {"source": "ref:read_doc"}]})
    found = caught.value
    assert (found.parameter, found.ref, found.reason) == ("action_results", "read_doc", "nested")
    assert "action_results/1/source" in str(found)
    assert "not supported" in str(found)


def test_an_empty_ref_is_malformed() -> None:
    with pytest.raises(RefProblem) as caught:
        resolve({"prompt_override": "ref: "})
    assert (caught.value.reason, caught.value.ref) == ("malformed", None)


def test_a_ref_problem_is_a_sea_error_with_the_tool_argument_code() -> None:
    found = problem("count", 5.5)
    assert isinstance(found, SeaError)
    assert found.code == ToolArgumentError.code


def test_refs_and_plain_values_mix_and_records_follow_parameter_order() -> None:
    arguments, records, warnings = resolve(
        {"count": 3, "prompt_override": "ref:read_doc", "step_id": "ref:plan"}
    )
    assert arguments == {"count": 3, "prompt_override": "- buy milk\n", "step_id": "s1"}
    assert [r.parameter for r in records] == ["prompt_override", "step_id"]
    assert warnings == []


def test_results_are_not_modified() -> None:
    results = {"read_doc": {"content": "x" * 100, "truncated": False}}
    snapshot = {"read_doc": dict(results["read_doc"])}
    resolve({"action_results": "ref:read_doc", "note": "ref:read_doc"}, results)
    assert results == snapshot


# --- the design-note scenarios -----------------------------------------------------------


def test_scenario_a_an_object_result_for_an_array_parameter_becomes_a_list_of_it() -> None:
    arguments, records, warnings = resolve({"action_results": "ref:read_doc"})
    assert arguments == {"action_results": [READ_DOC]}
    assert records == [Normalization("action_results", "array.wrap", "object", "array")]
    assert warnings == []


def test_scenario_b_a_file_read_result_for_a_string_parameter_becomes_its_content() -> None:
    arguments, records, _ = resolve({"prompt_override": "ref:read_doc"})
    assert arguments == {"prompt_override": "- buy milk\n"}
    assert records == [Normalization("prompt_override", "string.content", "object", "string")]


def test_scenario_c_an_id_parameter_takes_the_first_present_key() -> None:
    arguments, records, _ = resolve({"step_id": "ref:plan"})
    assert arguments == {"step_id": "s1"}
    assert records == [Normalization("step_id", "id.key", "object", "string", "first_step_id")]


def test_the_scenarios_pass_the_existing_argument_checks() -> None:
    @tool
    def respond(action_results: list[dict[str, Any]], prompt_override: str = "") -> str:
        """Answer from earlier action results."""
        return prompt_override

    schema = tool_schema(respond)
    arguments, _, _ = resolve_parameters(
        "respond",
        schema,
        {"action_results": "ref:read_doc", "prompt_override": "ref:read_doc"},
        {"read_doc": READ_DOC},
    )
    assert type_guard("respond", schema, arguments) is None
    prepared = prepare_arguments("respond", schema, arguments, playbook=None, node=None)
    assert prepared == {"action_results": [READ_DOC], "prompt_override": "- buy milk\n"}


# --- array parameters --------------------------------------------------------------------


def test_array_a_list_stays_and_a_tuple_becomes_a_list() -> None:
    assert one("action_results", [{"a": 1}])[:2] == (
        [{"a": 1}],
        Normalization("action_results", "as_is", "array", "array"),
    )
    assert one("action_results", ({"a": 1},))[0] == [{"a": 1}]


@pytest.mark.parametrize("result", ["plain text", 5, 2.5, True, None])
def test_array_any_other_value_is_wrapped_raw_with_a_warning(result: object) -> None:
    argument, record, warnings = one("action_results", result)
    assert argument == [{"raw": result}]
    assert (record.rule, record.to_type) == ("array.raw", "array")
    assert len(warnings) == 1
    assert "'action_results'" in warnings[0] and "'earlier'" in warnings[0]
    assert warnings[0].startswith("tool 'respond': ")


def test_array_an_item_of_the_declared_item_type_is_wrapped_as_the_item() -> None:
    argument, record, warnings = one("tags", "urgent")  # list[str] | None
    assert (argument, record.rule, warnings) == (["urgent"], "array.wrap", [])


# --- string parameters -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "text", "rule"),
    [
        ({"content": "c", "data": {"content": "d"}, "response": "r"}, "c", "string.content"),
        ({"content": None, "data": {"content": "d"}, "response": "r"}, "d", "string.data_content"),
        ({"data": {"content": 5}, "response": "r"}, "r", "string.response"),
        ({"data": "x", "n": 1}, '{"data":"x","n":1}', "string.json"),
        ([1, "two"], '[1,"two"]', "string.json"),
        (5, "5", "string.json"),
        (True, "true", "string.json"),
        (None, "null", "string.json"),
        ("already text", "already text", "as_is"),
    ],
)
def test_string_rules(result: object, text: str, rule: str) -> None:
    argument, record, warnings = one("prompt_override", result)
    assert argument == text
    assert record == Normalization("prompt_override", rule, json_type(result), "string")
    assert warnings == []


def test_string_a_value_of_another_accepted_type_stays() -> None:
    argument, record, _ = one("mode", 3)  # int | str
    assert (argument, record.rule) == (3, "as_is")
    assert one("mode", {"content": "fast"})[0] == "fast"


def test_string_truncated_at_max_length_with_the_note_inside() -> None:
    text = "x" * 200
    argument, record, _ = one("note", {"content": text})  # maxLength 60 inside anyOf
    assert isinstance(argument, str)
    assert len(argument) <= 60
    note = TRUNCATION_NOTE.format(kept=25, full=200)
    assert argument == "x" * 25 + note
    assert argument.endswith("\n…[truncated: 25 of 200 characters]")
    assert record == Normalization(
        "note",
        "string.truncated",
        "object",
        "string",
        "content; cut to 25 of 200 characters (limit 60)",
    )


def test_string_truncated_at_the_cap_and_the_smaller_limit_applies() -> None:
    text = "y" * 12345
    argument, record, _ = one("prompt_override", text, string_cap=4000)
    assert isinstance(argument, str) and len(argument) <= 4000
    assert argument.startswith("y" * 3900)
    assert argument.endswith(" of 12345 characters]")
    assert record.rule == "string.truncated"
    assert record.detail is not None and "of 12345 characters (limit 4000)" in record.detail
    assert record.detail.startswith("string; ")
    capped, _, _ = one("note", text, string_cap=1000)  # maxLength 60 is smaller
    assert isinstance(capped, str) and len(capped) <= 60
    lower_cap, _, _ = one("note", text, string_cap=40)
    assert isinstance(lower_cap, str) and len(lower_cap) <= 40


def test_string_at_the_limit_exactly_is_not_cut() -> None:
    argument, record, _ = one("note", "z" * 60)
    assert (argument, record.rule) == ("z" * 60, "as_is")


@pytest.mark.parametrize("limit", [0, 1, 5, 20])
def test_string_a_limit_too_small_for_the_note_still_holds(limit: int) -> None:
    argument, record, _ = one("text", "w" * 50, schema=string_schema(maxLength=limit))
    assert isinstance(argument, str) and len(argument) <= limit
    assert argument == ("w" * (limit - 1) + "…" if limit else "")
    assert record.rule == "string.truncated"


def test_string_max_length_through_a_ref_into_defs() -> None:
    schema = {
        "type": "object",
        "$defs": {"Short": {"type": "string", "maxLength": 45}},
        "properties": {"text": {"$ref": "#/$defs/Short"}},
    }
    argument, record, _ = one("text", {"response": "r" * 100}, schema=schema)
    assert isinstance(argument, str) and len(argument) <= 45
    assert record.detail == "response; cut to 10 of 100 characters (limit 45)"


def test_negative_string_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="string_cap"):
        normalize_to_schema("text", "x", {"type": "string"}, {}, string_cap=-1)


# --- id parameters -----------------------------------------------------------------------


def test_id_prefers_the_earlier_key_and_skips_empty_ones() -> None:
    both = {"step_id": "s0", "first_step_id": "s1"}
    assert one("step_id", both)[1].detail == "step_id"
    assert one("step_id", both)[0] == "s0"
    assert one("step_id", {"step_id": "", "first_step_id": "s1"})[0] == "s1"
    assert one("step_id", {"step_id": None, "first_step_id": "s1"})[0] == "s1"


def test_id_a_string_result_stays() -> None:
    argument, record, _ = one("step_id", "s9")
    assert (argument, record) == ("s9", Normalization("step_id", "as_is", "string", "string"))


def test_id_with_no_usable_key_names_the_keys_looked_for_and_found() -> None:
    found = problem("step_id", {"plan_id": "p1", "step_id": ""})
    assert (found.reason, found.ref, found.parameter) == ("no_id_key", "earlier", "step_id")
    assert "the result of action 'earlier' has none of step_id, first_step_id" in str(found)
    assert "(its keys: plan_id, step_id)" in str(found)


def test_id_an_integer_id_is_converted_for_an_integer_parameter() -> None:
    schema = {
        "type": "object",
        "properties": {"task": {"type": "integer", REF_KEYWORD: ["task_id"]}},
    }
    argument, record, _ = one("task", {"task_id": "42"}, schema=schema)
    assert argument == 42
    assert record == Normalization(
        "task", "id.key", "object", "integer", "task_id, then number.from_string"
    )
    assert problem("task", {"task_id": "forty-two"}, schema).reason == "type_mismatch"


def test_ref_keys_reads_the_keyword_on_the_property_or_its_definition() -> None:
    root = {"$defs": {"StepId": {"type": "string", REF_KEYWORD: "step_id"}}}
    assert ref_keys({"$ref": "#/$defs/StepId"}, root) == ("step_id",)
    assert ref_keys({"type": "string", REF_KEYWORD: ["a", 5, ""]}, {}) == ("a",)
    assert ref_keys({"type": "string", REF_KEYWORD: []}, {}) == ()
    assert ref_keys(SCHEMA["properties"]["step_id"], SCHEMA) == ("step_id", "first_step_id")


# --- other parameters: as is, lossless conversions, refusals -----------------------------


@pytest.mark.parametrize(
    ("parameter", "result", "argument", "rule"),
    [
        ("count", 5, 5, "as_is"),
        ("count", 5.0, 5, "integer.from_number"),
        ("count", "5", 5, "number.from_string"),
        ("count", " -12 ", -12, "number.from_string"),
        ("count", "5.0", 5, "number.from_string"),
        ("count", "1e3", 1000, "number.from_string"),
        ("ratio", 5, 5, "as_is"),
        ("ratio", 2.5, 2.5, "as_is"),
        ("ratio", "2.5", 2.5, "number.from_string"),
        ("ratio", "7", 7, "number.from_string"),
        ("enabled", True, True, "as_is"),
        ("enabled", "true", True, "boolean.from_string"),
        ("enabled", " FALSE ", False, "boolean.from_string"),
        ("window", {"start": 1, "end": 2}, {"start": 1, "end": 2}, "as_is"),
        ("window", None, None, "as_is"),
    ],
)
def test_other_lossless(parameter: str, result: object, argument: object, rule: str) -> None:
    got, record, warnings = one(parameter, result)
    assert got == argument and type(got) is type(argument)
    assert (record.rule, warnings) == (rule, [])


@pytest.mark.parametrize(
    ("parameter", "result", "expected", "found"),
    [
        ("count", 5.5, "expects integer", "got number (5.5)"),
        ("count", "5.5", "expects integer", 'got string ("5.5")'),
        ("count", "five", "expects integer", 'got string ("five")'),
        ("count", "007", "expects integer", 'got string ("007")'),
        ("count", "0x10", "expects integer", 'got string ("0x10")'),
        ("count", "1e999999", "expects integer", 'got string ("1e999999")'),
        ("count", True, "expects integer", "got boolean (true)"),
        ("count", {"content": "5"}, "expects integer", "got object"),
        ("ratio", "1e400", "expects number", 'got string ("1e400")'),
        ("ratio", "NaN", "expects number", 'got string ("NaN")'),
        ("enabled", "1", "expects boolean", 'got string ("1")'),
        ("enabled", "yes", "expects boolean", 'got string ("yes")'),
        ("enabled", 1, "expects boolean", "got integer (1)"),
        ("window", "1-2", "expects null or object", 'got string ("1-2")'),
    ],
)
def test_other_refused(parameter: str, result: object, expected: str, found: str) -> None:
    refused = problem(parameter, result)
    assert refused.reason == "type_mismatch"
    assert refused.parameter == parameter
    assert str(refused).startswith(f"tool 'respond': argument {parameter!r} (ref:earlier): ")
    assert expected in str(refused) and found in str(refused)


def test_other_right_type_but_refused_by_the_schema_is_invalid() -> None:
    refused = problem("window", {"start": -1, "end": 2})
    assert refused.reason == "invalid"
    assert "minimum of 0" in str(refused)
    assert "got object" in str(refused)


def test_other_an_untyped_parameter_takes_anything() -> None:
    schema = {"type": "object", "properties": {"anything": {}}}
    assert one("anything", {"a": [1]}, schema=schema)[:2] == (
        {"a": [1]},
        Normalization("anything", "as_is", "object", "object"),
    )


def test_rule_names_are_stable() -> None:
    assert {str(rule) for rule in Rule} == {
        "as_is",
        "array.wrap",
        "array.raw",
        "string.content",
        "string.data_content",
        "string.response",
        "string.json",
        "string.truncated",
        "id.key",
        "integer.from_number",
        "number.from_string",
        "boolean.from_string",
    }
    assert type(one("count", "5")[1].rule) is str


# --- the type guard ----------------------------------------------------------------------


def test_type_guard_accepts_right_types() -> None:
    arguments = {"count": 3, "ratio": 2, "prompt_override": None, "tags": ["a"], "note": "n"}
    assert type_guard("respond", SCHEMA, arguments) is None
    assert type_guard("respond", SCHEMA, {"count": 3.0}) is None  # JSON Schema: an integer
    assert type_guard("respond", SCHEMA, {"unknown": object()}) is None  # left to the checks


def test_type_guard_names_the_first_wrong_argument_like_the_argument_checks() -> None:
    arguments = {"count": 3, "enabled": "yes", "ratio": "fast"}
    message = type_guard("respond", SCHEMA, arguments)
    assert message == "tool 'respond': argument 'enabled' expects boolean, got string (\"yes\")"
    with pytest.raises(ToolArgumentError) as caught:
        prepare_arguments("respond", SCHEMA, {"enabled": "yes"}, playbook=None, node=None)
    assert caught.value.detail == message


def test_type_guard_null_for_a_required_argument_is_wrong() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert type_guard("search", schema, {"q": None}) == (
        "tool 'search': argument 'q' expects string, got null (null)"
    )


# --- properties --------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text().filter(lambda text: not text.startswith("ref:")),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
RESULTS = (
    JSON_VALUES
    | st.dictionaries(st.sampled_from(["content", "data", "response", "text"]), JSON_VALUES)
    | st.fixed_dictionaries({"data": st.fixed_dictionaries({"content": st.text()})})
    | st.text(max_size=400)
)
LIMITS = st.none() | st.integers(min_value=0, max_value=300)


@st.composite
def string_parameters(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], int | None]:
    max_length = draw(LIMITS)
    member: dict[str, Any] = {"type": "string"}
    if max_length is not None:
        member["maxLength"] = max_length
    shape = draw(st.sampled_from(["plain", "optional", "ref"]))
    root: dict[str, Any] = {"type": "object"}
    if shape == "optional":
        prop: dict[str, Any] = {"anyOf": [member, {"type": "null"}]}
    elif shape == "ref":
        root["$defs"] = {"Text": member}
        prop = {"$ref": "#/$defs/Text"}
    else:
        prop = member
    root["properties"] = {"p": prop}
    return prop, root, max_length


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(string_parameters(), RESULTS, LIMITS)
def test_a_string_parameter_always_gets_a_str_within_its_limit(
    parameter: tuple[dict[str, Any], dict[str, Any], int | None],
    result: object,
    cap: int | None,
) -> None:
    prop, root, max_length = parameter
    argument, record, warning = normalize_to_schema("p", result, prop, root, string_cap=cap)
    assert isinstance(argument, str)
    limits = [n for n in (max_length, cap) if n is not None]
    if limits:
        assert len(argument) <= min(limits)
    assert record.to_type == "string" and warning is None


@settings(max_examples=300, deadline=None)
@given(
    RESULTS,
    st.sampled_from(
        [
            {"type": "array"},
            {"type": "array", "items": {"type": "object"}},
            {"type": "array", "items": {"type": "string"}},
            {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]},
        ]
    ),
)
def test_an_array_parameter_always_gets_a_list(result: object, prop: dict[str, Any]) -> None:
    argument, record, warning = normalize_to_schema("p", result, prop, {}, string_cap=None)
    assert isinstance(argument, list)
    assert record.to_type == "array"
    assert (warning is not None) == (record.rule == "array.raw")


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(list(SCHEMA["properties"])), JSON_VALUES))
def test_parameters_without_refs_pass_through_unchanged(parameters: dict[str, Any]) -> None:
    assert resolve(parameters) == (parameters, [], [])
