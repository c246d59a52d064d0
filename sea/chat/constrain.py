"""JSON-schema-constrained output for a small model: a terminating grammar and a parser.

A 135M-parameter model loops inside long strings and free-form objects, so the schema the
grammar is built from is a tightened copy of the caller's: every string without a length
bound gets ``maxLength``, every object with ``properties`` and no ``additionalProperties``
gets ``additionalProperties: false``, an object with neither becomes an empty object, and
arrays get ``maxItems``. Each change only narrows what the grammar accepts, so anything it
produces is still valid against the caller's schema.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from typing import Any

from sea.chat.errors import StructuredOutputParseError
from sea.lang.jsonschemas import validator

_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_SINGLE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")


def tighten_schema(
    schema: Mapping[str, Any], *, max_string_length: int, max_items: int
) -> dict[str, Any]:
    """A copy of ``schema`` whose grammar always terminates within a small budget.

    Args:
        schema: The caller's JSON Schema (not modified).
        max_string_length: ``maxLength`` given to strings that have none (and no enum/const).
        max_items: ``maxItems`` given to arrays that have none.

    Returns:
        The tightened copy.
    """
    tightened = copy.deepcopy(dict(schema))
    _tighten_node(tightened, max_string_length, max_items)
    return tightened


def _tighten_node(node: Any, max_len: int, max_items: int) -> None:
    if not isinstance(node, dict):
        return
    _tighten_here(node, max_len, max_items)
    for child in _subschemas(node):
        _tighten_node(child, max_len, max_items)


def _tighten_here(node: dict[str, Any], max_len: int, max_items: int) -> None:
    """Bound this schema node itself (its subschemas are left to the caller)."""
    kinds = node.get("type")
    kind_set = set(kinds) if isinstance(kinds, list) else {kinds}
    closed = "enum" in node or "const" in node
    if "string" in kind_set and not closed and "maxLength" not in node:
        node["maxLength"] = max_len
    if kinds is None and "properties" in node:
        kind_set = {"object"}
    if "object" in kind_set and "additionalProperties" not in node:
        node["additionalProperties"] = False
        node.setdefault("properties", {})
    if "array" in kind_set and "maxItems" not in node:
        node["maxItems"] = max_items


def _subschemas(node: dict[str, Any]) -> Iterator[Any]:
    """The schemas nested directly in ``node`` (lists, maps and single subschemas)."""
    for key in _SCHEMA_LISTS:
        children = node.get(key)
        if isinstance(children, list):
            yield from children
    for key in _SCHEMA_MAPS:
        children = node.get(key)
        if isinstance(children, dict):
            yield from children.values()
    for key in _SCHEMA_SINGLE:
        yield node.get(key)


def parse_structured(text: str, schema: Mapping[str, Any], *, finish_reason: str | None) -> Any:
    """Parse the model's constrained output and check it against the caller's schema.

    Control characters inside strings (the grammar lets a raw newline through) are accepted.

    Args:
        text: The model's output.
        schema: The caller's (not the tightened) JSON Schema.
        finish_reason: llama's finish reason; ``"length"`` means the output was cut off.

    Returns:
        The parsed JSON value.

    Raises:
        StructuredOutputParseError: the text is not JSON, or not valid against the schema.
    """
    try:
        value = json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        cut = ""
        if finish_reason == "length":
            cut = " (the output was cut off at the max_tokens limit)"
        raise StructuredOutputParseError(
            f"the model's output is not valid JSON{cut}: {exc.msg} at character {exc.pos}"
        ) from exc
    errors = sorted(validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(root)"
        raise StructuredOutputParseError(
            f"the model's output does not match the schema at {where}: {first.message}"
        )
    return value
