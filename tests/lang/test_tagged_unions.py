"""SEA's validator checks a tagged union (``anyOf`` of objects told apart by one property,
an action plan's actions) by the member its tag picks: the verdict is jsonschema's own for
every instance, and a refusal names what is wrong inside that member."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from sea.lang.jsonschemas import validator

TOOLS = ["fetch", "draft", "collect"]

MEMBERS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,15}$"},
            "tool": {"enum": ["fetch"]},
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "max": {"type": "integer"}},
                "required": ["path"],
                "additionalProperties": False,
            },
        },
        "required": ["id", "tool", "parameters"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "tool": {"const": "draft", "description": "the tool"},
            "parameters": {
                "type": "object",
                "properties": {"text": {"anyOf": [{"type": "string", "maxLength": 5},
                                                  {"type": "null"}]}},
                "additionalProperties": False,
            },
        },
        "required": ["tool", "parameters", "id"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "tool": {"enum": ["collect"]},
            "parameters": {
                "type": "object",
                "properties": {"items": {"type": "array", "items": {"type": "object"}}},
                "required": ["items"],
            },
        },
        "required": ["id", "tool", "parameters"],
    },
]
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"actions": {"type": "array", "items": {"anyOf": MEMBERS}}},
    "required": ["actions"],
}

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(
    ["", "a", "x.md", "abcdef", "fetch", "Bad id", "a_1"]))
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["a", "path", "k"]), inner,
                                            max_size=2)),
    max_leaves=6,
)
_parameters = st.dictionaries(
    st.sampled_from(["path", "max", "text", "items", "other"]), _values, max_size=3
)
_action = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.sampled_from(["a", "b_2", "Bad id", ""]), _scalars),
        "tool": st.one_of(st.sampled_from([*TOOLS, "erase"]), _scalars),
        "parameters": st.one_of(_parameters, _values),
        "extra": _scalars,
    },
)
_well_formed = st.one_of(  # each member's own actions, right or nearly right
    st.fixed_dictionaries({"id": st.sampled_from(["a", "b_2", "Bad id"]), "tool": st.just("fetch"),
                           "parameters": st.fixed_dictionaries(
                               {"path": st.sampled_from(["x.md", 3])},
                               optional={"max": st.sampled_from([1, "1"])})}),
    st.fixed_dictionaries({"id": st.just("c"), "tool": st.just("draft"),
                           "parameters": st.fixed_dictionaries(
                               {}, optional={"text": st.sampled_from(["ok", None, "too long"])})}),
    st.fixed_dictionaries({"id": st.just("d"), "tool": st.just("collect"),
                           "parameters": st.fixed_dictionaries(
                               {"items": st.lists(st.sampled_from([{}, {"a": 1}, 2]),
                                                  max_size=2)},
                               optional={"more": _scalars})}),
)
_instances = st.one_of(
    st.fixed_dictionaries({"actions": st.lists(st.one_of(_well_formed, _action, _values),
                                               max_size=4)}),
    _values,
)


@settings(max_examples=400)
@given(_instances)
def test_the_verdict_on_a_tagged_union_is_jsonschemas_own(instance: Any) -> None:
    reference = Draft202012Validator(SCHEMA)
    assert validator(SCHEMA).is_valid(instance) == reference.is_valid(instance)
    assert bool(list(validator(SCHEMA).iter_errors(instance))) != reference.is_valid(instance)


def test_a_refusal_names_what_is_wrong_inside_the_member_the_tag_picks() -> None:
    plan = {"actions": [
        {"id": "a", "tool": "fetch", "parameters": {"path": "x.md"}},
        {"id": "b", "tool": "draft", "parameters": {"text": "far too long"}},
    ]}
    (error,) = list(validator(SCHEMA).iter_errors(plan))
    assert list(error.absolute_path) == ["actions", 1, "parameters", "text"]
    (mine,) = list(Draft202012Validator(SCHEMA).iter_errors(plan))
    assert "is not valid under any of the given schemas" in mine.message  # jsonschema's


def test_an_unknown_tag_or_a_non_object_is_refused_as_jsonschema_refuses_it() -> None:
    for action in ({"id": "a", "tool": "erase", "parameters": {}}, {"id": "a"}, "fetch", 3):
        plan = {"actions": [action]}
        (error,) = list(validator(SCHEMA).iter_errors(plan))
        (theirs,) = list(Draft202012Validator(SCHEMA).iter_errors(plan))
        assert error.message == theirs.message


def test_a_union_whose_members_share_a_tag_value_is_checked_member_by_member() -> None:
    other = {**MEMBERS[0], "properties": {
        **MEMBERS[0]["properties"], "parameters": {"type": "object", "required": ["other"]}}}
    for members in ([MEMBERS[0], other], [other, MEMBERS[0]]):
        schema = {"anyOf": members}
        for action in ({"id": "a", "tool": "fetch", "parameters": {"path": "x.md"}},
                       {"id": "a", "tool": "fetch", "parameters": {"other": 1}}):
            assert validator(schema).is_valid(action)  # one member or the other takes it
            assert Draft202012Validator(schema).is_valid(action)
