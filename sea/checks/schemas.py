"""``response_schema`` must be a valid JSON Schema (2020-12)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator

from sea import codes
from sea.checks.context import CheckContext
from sea.checks.nodes import indexed, node_pointer
from sea.hints import TYPE_NAME_FIXES
from sea.issues import Issue, error
from sea.locate import join_pointer
from sea.models import LLMNode, Playbook

_TYPES = {"null", "boolean", "object", "array", "number", "integer", "string"}


@lru_cache(maxsize=1)
def _meta() -> Draft202012Validator:
    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


Path = tuple[str | int, ...]


def _bad_type_names(value: Any, path: Path) -> Iterator[tuple[Path, str]]:
    if isinstance(value, str) and value not in _TYPES:
        yield path, value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str) and item not in _TYPES:
                yield (*path, i), item


def _bad_types(schema: Any, path: Path = ()) -> Iterator[tuple[Path, str]]:
    """(path of a `type` keyword, bad name) for every unknown type name."""
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from _bad_types(item, (*path, i))
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key == "type":
            yield from _bad_type_names(value, (*path, key))
        elif key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                yield from _bad_types(sub, (*path, key, name))
        elif key not in ("enum", "const", "default", "examples") and isinstance(
            value, (dict, list)
        ):
            yield from _bad_types(value, (*path, key))


def _schema_issues(index: int, node: LLMNode, schema: dict[str, Any]) -> list[Issue]:
    base = node_pointer(index, "response_schema")
    issues = []
    flagged: set[str] = set()
    for path, name in _bad_types(schema):
        fix = TYPE_NAME_FIXES.get(name)
        pointer = base + join_pointer(*path)
        flagged.add(pointer)
        issues.append(
            error(
                codes.BAD_RESPONSE_SCHEMA,
                f"response_schema uses the type `{name}`, which JSON Schema does not have",
                pointer,
                node_id=node.id,
                hint=(f'write `"{fix}"`; ' if fix else "")
                + "JSON Schema types: "
                + ", ".join(sorted(_TYPES)),
            )
        )
    for err in _meta().iter_errors(schema):
        pointer = base + join_pointer(*err.absolute_path)
        if any(pointer.startswith(f) or f.startswith(pointer) for f in flagged):
            continue
        flagged.add(pointer)
        issues.append(
            error(
                codes.BAD_RESPONSE_SCHEMA,
                f"response_schema is not a valid JSON Schema: {err.message}",
                pointer,
                node_id=node.id,
                hint="see https://json-schema.org/understanding-json-schema/",
            )
        )
    return issues


def check_response_schemas(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """Every llm node's ``response_schema`` against the 2020-12 metaschema."""
    issues: list[Issue] = []
    for index, node in indexed(playbook):
        if isinstance(node, LLMNode) and node.response_schema is not None:
            issues.extend(_schema_issues(index, node, node.response_schema))
    return issues
