"""The checks that spare ``sea validate`` importing jsonschema vouch only for what jsonschema
accepts, and for what the bundled playbooks hold: :func:`sea.lang.metaschema.surely_valid`
(a schema against the 2020-12 metaschema) and :func:`sea.lang.jsonschemas.plainly_valid`
(a tool argument against its schema)."""

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema_specifications import REGISTRY as SPECIFICATIONS

from sea.lang.jsonschemas import plainly_valid, validator
from sea.lang.metaschema import KNOWN_KEYWORDS, metaschema, surely_valid
from sea.resources import ENGINE_TOOLS_FILE, schemas_dir

ROOT = Path(__file__).resolve().parents[2]


def _metaschema_keywords() -> set[str]:
    """Every keyword the 2020-12 metaschema and its vocabularies' metaschemas constrain."""
    contents = [Draft202012Validator.META_SCHEMA] + [
        SPECIFICATIONS.contents(f"https://json-schema.org/draft/2020-12/meta/{vocabulary}")
        for vocabulary in ("core", "applicator", "unevaluated", "validation", "meta-data",
                           "format-annotation", "content")
    ]
    return {keyword for schema in contents for keyword in schema.get("properties", {})}


def test_every_metaschema_keyword_is_known() -> None:
    # a keyword the check does not know is ignored, so it must know every one that matters
    assert _metaschema_keywords() == KNOWN_KEYWORDS


def _response_schemas(value: Any) -> list[Any]:
    found = []
    if isinstance(value, dict):
        if "response_schema" in value:
            found.append(value["response_schema"])
        for item in value.values():
            found += _response_schemas(item)
    elif isinstance(value, list):
        for item in value:
            found += _response_schemas(item)
    return found


BUNDLED = [
    schema
    for directory in ("playbooks", "tests/data/valid", "tests/data/saiverse")
    for path in sorted((ROOT / directory).glob("*.json"))
    for schema in _response_schemas(orjson.loads(path.read_bytes()))
]
ENGINE_TOOLS = [
    schema
    for schema in orjson.loads((schemas_dir() / ENGINE_TOOLS_FILE).read_bytes()).values()
    if schema is not None
]


def test_the_bundled_schemas_need_no_metaschema() -> None:
    # what keeps `sea validate playbooks` from importing jsonschema
    assert len(BUNDLED) > 5
    for schema in BUNDLED + ENGINE_TOOLS:
        assert surely_valid(schema), schema
        assert metaschema().is_valid(schema)


CANDIDATES: list[Any] = [
    None, True, False, 0, 1, -1, 2.0, 0.5, -0.5, "", "x", "string", "#a", "a\n", "^a$", "(", [],
    ["string"], ["string", "string"], ["x"], [1], [{}], [True], {}, {"type": "string"},
    {"type": "nope"}, {"a": {}}, {"a": 1},
]  # fmt: skip


@pytest.mark.parametrize("keyword", sorted(KNOWN_KEYWORDS | {"unknown", "x-extra"}))
def test_each_keyword_agrees_with_the_metaschema(keyword: str) -> None:
    for value in CANDIDATES:
        for schema in ({keyword: value}, {"properties": {"a": {keyword: value}}},
                       {"items": {"anyOf": [{keyword: value}]}}):
            if surely_valid(schema):
                assert metaschema().is_valid(schema), schema


SCHEMAS = st.recursive(
    st.sampled_from(CANDIDATES),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(sorted(KNOWN_KEYWORDS) + ["unknown"]), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(SCHEMAS)
def test_what_it_vouches_for_the_metaschema_accepts(schema: Any) -> None:
    if surely_valid(schema):
        assert metaschema().is_valid(schema)


INSTANCES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from([0.0, 1.0, 2.5, -1.5])
    | st.sampled_from(["", "a", "ab", "abc", "string", "é"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner,
                                                                 max_size=2),
    max_leaves=6,
)
KEYWORD_VALUES: dict[str, Any] = {
    "type": st.sampled_from(["null", "boolean", "integer", "number", "string", "array",
                             "object"]) | st.lists(st.sampled_from(["integer", "string",
                                                                     "null"]), min_size=1),
    "minimum": st.integers(-3, 3) | st.just(1.5), "maximum": st.integers(-3, 3),
    "exclusiveMinimum": st.integers(-3, 3), "exclusiveMaximum": st.just(2.5),
    "minLength": st.integers(0, 3), "maxLength": st.integers(0, 3),
    "enum": st.lists(st.sampled_from(["a", "ab", 1, True, None, 1.0]), min_size=1),
    "title": st.just("t"), "description": st.just("d"), "default": INSTANCES,
    "x-sea-ref": st.just("r"), "const": INSTANCES, "pattern": st.just("^a"),
    "minItems": st.integers(0, 2), "required": st.just(["a"]),
}


def _value(keyword: str, inner: Any) -> Any:
    if keyword == "anyOf":
        return st.lists(inner | st.booleans(), min_size=1, max_size=2)
    return inner | st.booleans() if keyword == "items" else KEYWORD_VALUES[keyword]


def _schemas(inner: Any) -> Any:
    keywords = st.sets(st.sampled_from(sorted(KEYWORD_VALUES) + ["anyOf", "items"]), max_size=4)
    return keywords.flatmap(
        lambda chosen: st.fixed_dictionaries({key: _value(key, inner) for key in chosen})
    )


ARGUMENT_SCHEMAS = st.recursive(st.fixed_dictionaries({}), _schemas, max_leaves=6)


@settings(max_examples=600, deadline=None)
@given(INSTANCES, ARGUMENT_SCHEMAS)
def test_what_plainly_valid_accepts_the_validator_accepts(instance: Any, schema: Any) -> None:
    if plainly_valid(instance, schema):
        assert validator(schema).is_valid(instance), (instance, schema)


def test_plainly_valid_judges_the_usual_argument_schemas() -> None:
    tags = {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
            "default": None, "title": "Tags"}
    limit = {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
    assert plainly_valid(["conversation"], tags)
    assert plainly_valid(None, tags)
    assert not plainly_valid([1], tags)
    assert plainly_valid(5, limit)
    assert plainly_valid(5.0, limit)
    assert not plainly_valid(0, limit)
    assert not plainly_valid(True, limit)
    assert not plainly_valid("a", {"type": "string", "pattern": "^a"})  # left to jsonschema


def test_a_schema_asked_again_is_checked_by_the_validator_already_made() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}},
              "required": ["n"]}
    first = validator(schema)
    same = validator({"required": ["n"], "properties": {"n": {"minimum": 1, "type": "integer"}},
                      "type": "object"})  # the same schema, written in another order
    assert same is first
    other = validator({**schema, "required": []})
    assert other is not first
    assert not first.is_valid({}) and other.is_valid({})
    assert [e.message for e in first.iter_errors({"n": 0})] == [
        "0 is less than the minimum of 1"]
