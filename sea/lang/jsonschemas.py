"""JSON Schema validation with linear-time patterns: the one place SEA builds a validator.

Model answers and tool arguments are hostile input, and the schemas they are checked against
(``response_schema``, tool argument schemas) may hold ``pattern`` and ``patternProperties``.
jsonschema runs those with Python's ``re``, which backtracks: ``^(a+)+$`` against thirty
``a`` and a ``!`` holds the GIL for about a minute per match and freezes the whole host
(other pulses, cancellation). :func:`validator`
builds a Draft 2020-12 validator whose regular expressions run on RE2 (``google-re2``),
whose time is linear in the text: every keyword that matches a regex is replaced
(``pattern``, ``patternProperties``, and ``additionalProperties`` and
``unevaluatedProperties``, which also match the ``patternProperties`` regexes). A pattern
RE2 cannot compile (a backreference, a lookaround) never falls back to ``re``: the value is
rejected with an error naming the pattern, and :func:`schema_problems` reports it before
anything runs (``sea validate``, the call path). The validator never fetches a remote
``$ref`` (jsonschema's default would): only the schema itself and the JSON Schema
metaschemas resolve.

RE2 reads a pattern much as JSON Schema's ECMA-262 does, closer than Python's ``re`` (``\\d``
and ``\\w`` are ASCII, ``$`` matches only at the end). jsonschema's ``format: regex`` is not
asserted (no format checker), as before.
"""


from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from sea.lang.linear_regex import pattern_problem
from sea.lang.schema_keywords import LINEAR_KEYWORDS
from sea.lang.schema_problems import SchemaProblem, schema_problems

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

__all__ = [
    "SchemaProblem",
    "SchemaValidator",
    "pattern_problem",
    "plainly_valid",
    "schema_problems",
    "validator",
]


@lru_cache(maxsize=1)
def _linear_validator() -> tuple[Any, Any]:
    """The validator class whose regex keywords run on RE2, and the registry it resolves
    ``$ref``s in: none is retrieved, a ``$ref`` resolves within the schema (and the
    metaschemas) or not at all. Built on first use: importing jsonschema and referencing
    costs a start-up more than checking every bundled playbook."""
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry

    extended = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, LINEAR_KEYWORDS
    )
    local_only: Registry[Any] = Registry()
    return extended, local_only


class SchemaValidator(Protocol):
    """What SEA uses of a validator (a jsonschema validator object)."""

    def iter_errors(self, instance: Any) -> Iterator[ValidationError]:
        """Every way ``instance`` fails the schema."""
        ...

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` passes the schema."""
        ...


def validator(schema: Mapping[str, Any] | bool) -> SchemaValidator:
    """A JSON Schema 2020-12 validator of ``schema`` whose patterns run on RE2.

    Every validator of a schema SEA does not own (response schemas, tool argument schemas,
    action plans built from them) comes from here. The schema is assumed valid; check it
    with :func:`schema_problems` (and the metaschema) first.
    """
    if isinstance(schema, bool):
        return _built(schema)
    try:
        text = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # not JSON (a caller's mistake the checks report): not kept
        return _built(schema)
    return _kept(text)


KEPT_VALIDATORS = 256
"""The validators of this many schemas (by their JSON text) are kept: the same response
schema or tool schema, asked again by every call, is not made into a validator again."""


@lru_cache(maxsize=KEPT_VALIDATORS)
def _kept(text: bytes) -> SchemaValidator:
    return _built(orjson.loads(text))


def _built(schema: Mapping[str, Any] | bool) -> SchemaValidator:
    linear, local_only = _linear_validator()
    built: SchemaValidator = linear(schema, registry=local_only)
    return built


def _is_type(instance: Any, name: Any) -> bool:
    """Whether ``instance`` surely has the JSON type ``name`` as jsonschema sees it (``1.0``
    is an integer, ``True`` no number)."""
    simple = {"null": type(None), "boolean": bool, "string": str, "array": list, "object": dict}
    if name in simple:
        return isinstance(instance, simple[name])
    if isinstance(instance, bool):
        return False
    if name == "number":
        return isinstance(instance, (int, float))
    return name == "integer" and (
        isinstance(instance, int) or isinstance(instance, float) and instance.is_integer()
    )


_BOUNDS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": operator.ge, "maximum": operator.le,
    "exclusiveMinimum": operator.gt, "exclusiveMaximum": operator.lt,
}
_JSON = (type(None), bool, int, float, str, list, dict)


def _plain_keyword(instance: Any, keyword: str, value: Any) -> bool:
    """Whether one keyword surely accepts ``instance`` (False: maybe not)."""
    if not isinstance(instance, _JSON):
        return False
    if keyword == "type":
        return any(_is_type(instance, name) for name in (value if isinstance(value, list)
                                                         else [value]))
    if keyword in _BOUNDS:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        if isinstance(instance, bool) or not isinstance(instance, (int, float)):
            return True  # applies to numbers only
        return _BOUNDS[keyword](instance, value)
    if keyword in ("minLength", "maxLength"):
        if type(value) is not int:
            return False
        if not isinstance(instance, str):
            return True  # applies to strings only
        return len(instance) >= value if keyword == "minLength" else len(instance) <= value
    if keyword == "anyOf":
        return isinstance(value, list) and any(_plainly(instance, each) for each in value)
    if keyword == "items":
        return not isinstance(instance, list) or all(_plainly(each, value) for each in instance)
    if keyword == "enum":
        return isinstance(instance, str) and isinstance(value, list) and any(
            isinstance(each, str) and each == instance for each in value
        )
    return keyword in _ANNOTATIONS or keyword.startswith("x-")


_ANNOTATIONS = frozenset(("title", "description", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly"))


def plainly_valid(instance: Any, schema: Mapping[str, Any]) -> bool:
    """True only when ``schema`` accepts ``instance``; False when it may not (then ask
    :func:`validator`). It judges the simple schemas tool arguments mostly have (``type``,
    bounds, lengths, a string ``enum``, ``anyOf``, ``items``, annotations) without importing
    jsonschema; a test checks that what it accepts, the validator accepts."""
    return all(_plain_keyword(instance, keyword, value) for keyword, value in schema.items())


def _plainly(instance: Any, schema: Any) -> bool:
    """:func:`plainly_valid` of a subschema, which may be ``true``."""
    return schema is True or isinstance(schema, dict) and plainly_valid(instance, schema)


