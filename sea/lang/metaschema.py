"""The JSON Schema 2020-12 metaschema validator: checks that a schema is a valid schema.

:func:`surely_valid` answers for the common schemas without jsonschema (whose import costs a
``sea validate`` more than checking every bundled playbook); only when it cannot vouch for a
schema is :func:`metaschema` built, to find the errors or to accept what it could not.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator


@lru_cache(maxsize=1)
def metaschema() -> Draft202012Validator:
    """A validator of schemas against the 2020-12 metaschema (built once, on first use)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


_SIMPLE_TYPES = frozenset(("array", "boolean", "integer", "null", "number", "object", "string"))


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _positive(value: Any) -> bool:
    return _number(value) and value > 0


def _count(value: Any) -> bool:
    """A non-negative integer (only an ``int``: ``2.0``, which the metaschema also takes, is
    left to it)."""
    return type(value) is int and value >= 0


def _array(value: Any) -> bool:
    return isinstance(value, list)


def _anything(value: Any) -> bool:
    return True


def _names(value: Any) -> bool:
    """An array of distinct strings (``required``)."""
    return isinstance(value, list) and all(isinstance(v, str) for v in value) and len(
        set(value)
    ) == len(value)


def _type(value: Any) -> bool:
    """A simple type name, or a non-empty array of distinct ones."""
    if isinstance(value, str):
        return value in _SIMPLE_TYPES
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, str) and v in _SIMPLE_TYPES for v in value)
        and len(set(value)) == len(value)
    )


_VALUES: dict[str, Callable[[Any], bool]] = {
    "$comment": _string, "$ref": _string, "$dynamicRef": _string, "$recursiveRef": _string,
    "$schema": _string, "title": _string, "description": _string, "format": _string,
    "pattern": _string, "contentEncoding": _string, "contentMediaType": _string,
    "deprecated": _boolean, "readOnly": _boolean, "writeOnly": _boolean,
    "uniqueItems": _boolean,
    "minimum": _number, "maximum": _number, "exclusiveMinimum": _number,
    "exclusiveMaximum": _number, "multipleOf": _positive,
    "minLength": _count, "maxLength": _count, "minItems": _count, "maxItems": _count,
    "minContains": _count, "maxContains": _count, "minProperties": _count,
    "maxProperties": _count,
    "const": _anything, "default": _anything, "enum": _array, "examples": _array,
    "required": _names, "type": _type,
}
"""Keyword → whether the metaschema accepts its value (a keyword whose value is no schema)."""

_SCHEMA = frozenset((
    "additionalProperties", "items", "contains", "not", "if", "then", "else", "propertyNames",
    "unevaluatedItems", "unevaluatedProperties", "contentSchema",
))
"""Keywords whose value is a schema."""
_SCHEMA_MAPS = frozenset(("properties", "patternProperties", "$defs", "dependentSchemas",
                          "definitions"))
"""Keywords whose value is an object of schemas (``patternProperties``' names, which the
metaschema only annotates as regexes, are checked by :mod:`sea.lang.jsonschemas`)."""
_SCHEMA_ARRAYS = frozenset(("allOf", "anyOf", "oneOf", "prefixItems"))
"""Keywords whose value is a non-empty array of schemas."""
LEFT_TO_METASCHEMA = frozenset((
    "$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$vocabulary", "dependencies",
    "dependentRequired",
))
"""The metaschema's other keywords: a schema using one is always checked by the metaschema."""
KNOWN_KEYWORDS = frozenset(_VALUES) | _SCHEMA | _SCHEMA_MAPS | _SCHEMA_ARRAYS | LEFT_TO_METASCHEMA
"""Every keyword the 2020-12 metaschema constrains (a test checks it against jsonschema's)."""


def _inner(key: Any, value: Any) -> list[Any] | None:
    """The schemas inside keyword ``key``'s ``value`` (none for most keywords), or None when
    this check does not vouch for the value."""
    check = _VALUES.get(key)
    if check is not None:
        return [] if check(value) else None
    if key in _SCHEMA:
        return [value]
    if key in _SCHEMA_MAPS:
        return list(value.values()) if isinstance(value, dict) else None
    if key in _SCHEMA_ARRAYS:
        return value if isinstance(value, list) and value else None
    return None if key in LEFT_TO_METASCHEMA else []


def surely_valid(schema: Any) -> bool:
    """True only when the 2020-12 metaschema accepts ``schema``; False when it may not (then
    ask :func:`metaschema`). Keywords the metaschema does not know are ignored, as it
    ignores them; a schema using :data:`LEFT_TO_METASCHEMA`, or a value this check does not
    vouch for, gets False. A test checks that what it accepts, the metaschema accepts."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return False
        for key, value in node.items():
            inner = _inner(key, value)
            if inner is None:
                return False
            stack.extend(inner)
    return True
