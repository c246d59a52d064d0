"""An answer's schema (an ``llm`` node's ``response_schema``, or any node's that declares an
answer, :meth:`~sea.lang.node.NodeModel.answer`) must be a valid JSON Schema (2020-12) that
SEA can run: its patterns compile on the linear-time regex engine and its ``$ref``s resolve
within it."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import orjson

from sea.lang import codes
from sea.lang.checks.context import CheckContext
from sea.lang.checks.nodes import indexed, node_pointer
from sea.lang.hints import TYPE_NAME_FIXES
from sea.lang.issues import Issue, error, warning
from sea.lang.jsonschemas import SchemaProblem, schema_problems
from sea.lang.locate import escape_pointer, join_pointer
from sea.lang.metaschema import metaschema, surely_valid
from sea.lang.models import Playbook
from sea.lang.node import NodeModel
from sea.lang.uses import Answer

_TYPES = {"null", "boolean", "object", "array", "number", "integer", "string"}


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


@lru_cache(maxsize=512)
def _meta_errors(canonical: bytes) -> tuple[tuple[tuple[str | int, ...], str], ...]:
    """(path, message) of every metaschema error; cached by the schema's canonical JSON."""
    schema = orjson.loads(canonical)
    return tuple((tuple(e.absolute_path), e.message) for e in metaschema().iter_errors(schema))


def _schema_issues(index: int, node_id: str, answer: Answer) -> list[Issue]:
    schema, field = answer.schema, answer.schema_field
    base = node_pointer(index, field)
    issues = []
    flagged: set[str] = set()
    for path, name in _bad_types(schema):
        fix = TYPE_NAME_FIXES.get(name)
        pointer = base + join_pointer(*path)
        flagged.add(pointer)
        issues.append(
            error(
                codes.BAD_RESPONSE_SCHEMA,
                f"{field} uses the type `{name}`, which JSON Schema does not have",
                pointer,
                node_id=node_id,
                hint=(f'write `"{fix}"`; ' if fix else "")
                + "JSON Schema types: "
                + ", ".join(sorted(_TYPES)),
            )
        )
    meta = () if surely_valid(schema) else _meta_errors(
        orjson.dumps(schema, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    )
    for path, message in meta:
        pointer = base + join_pointer(*path)
        if any(pointer.startswith(f) or f.startswith(pointer) for f in flagged):
            continue
        flagged.add(pointer)
        issues.append(
            error(
                codes.BAD_RESPONSE_SCHEMA,
                f"{field} is not a valid JSON Schema: {message}",
                pointer,
                node_id=node_id,
                hint="see https://json-schema.org/understanding-json-schema/",
            )
        )
    for problem in schema_problems(schema):
        pointer = base + join_pointer(*problem.path)
        if not any(pointer.startswith(f) or f.startswith(pointer) for f in flagged):
            issues.append(_runnable_issue(node_id, field, pointer, problem))
    return issues


_RE2_HINT = (
    "patterns run on RE2, in time linear in the text, so no answer can stall the host; it "
    "has no backreferences (`\\1`) or lookarounds (`(?=`, `(?!`, `(?<=`, `(?<!`): rewrite "
    "the pattern without them, or check the value in a later node"
)


def _runnable_issue(node_id: str, field: str, pointer: str, problem: SchemaProblem) -> Issue:
    """The issue of a schema the metaschema accepts but SEA cannot run."""
    at_key = problem.path[-2:-1] == ("patternProperties",)
    if problem.kind == "unsupported_pattern":
        return error(codes.UNSUPPORTED_PATTERN, f"{field}: {problem.message}", pointer,
                     node_id=node_id, at_key=at_key, hint=_RE2_HINT)
    hint = (
        "a `$ref` points into the schema itself, e.g. `#/$defs/name` with `$defs` beside it"
        if problem.kind == "unresolved_ref"
        else "JSON Schema patterns are regular expressions (ECMA-262, as RE2 reads them)"
    )
    return error(codes.BAD_RESPONSE_SCHEMA, f"{field}: {problem.message}", pointer,
                 node_id=node_id, at_key=at_key, hint=hint)


def _declared(schema: Any, path: list[str]) -> bool:
    """False only when the schema declares its properties and the path leaves them."""
    for segment in path:
        if not isinstance(schema, dict):
            return True
        properties = schema.get("properties")
        if segment.isdigit() and isinstance(schema.get("items"), dict):
            schema = schema["items"]
        elif isinstance(properties, dict) and properties:
            if segment not in properties:
                return False
            schema = properties[segment]
        else:
            return True
    return True


def _mapping_issues(index: int, node_id: str, answer: Answer) -> list[Issue]:
    issues = []
    schema = answer.schema
    for source in answer.copies:
        if _declared(schema, answer.path(source)):
            continue
        fields = ", ".join(f"`{name}`" for name in schema.get("properties") or {})
        issues.append(
            warning(
                codes.MAPPING_SOURCE_UNKNOWN,
                f"{answer.copies_field} reads `{source}`, which {answer.schema_field} does "
                "not declare",
                node_pointer(index, answer.copies_field, escape_pointer(source)),
                node_id=node_id,
                at_key=True,
                hint=f"declared fields: {fields}" if fields else None,
            )
        )
    return issues


def check_response_schemas(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """Every answer schema against the 2020-12 metaschema, the paths copied out of the
    answer (``output_mapping``) against the fields it declares, and no node both declares
    an answer and offers tools."""
    issues: list[Issue] = []
    for index, node in indexed(playbook):
        answer = node.answer()
        if answer is not None and getattr(node, "response_schema_source", None) is not None:
            issues.append(warning(
                codes.SCHEMA_SOURCE_IGNORED,
                f"node `{node.id}` gives `response_schema`, so its `response_schema_source` "
                "is ignored",
                node_pointer(index, "response_schema_source"),
                node_id=node.id,
                hint="remove one of them: `response_schema` (a fixed schema) or "
                "`response_schema_source` (the schema from a tool or a variable)",
            ))
        if answer is None:
            continue
        issues.extend(_schema_issues(index, node.id, answer))
        issues.extend(_mapping_issues(index, node.id, answer))
        offered = next(node.tools_named(), None) if node.offered_tools() else None
        if offered is not None:
            issues.append(_tools_with_schema(index, node, answer, offered.at[0]))
    return issues


def _tools_with_schema(index: int, node: NodeModel, answer: Answer, field: str | int) -> Issue:
    return error(
        codes.TOOLS_WITH_SCHEMA,
        f"{node.node_type()} node `{node.id}` has both `{answer.schema_field}` and `{field}`; "
        "a model either answers in the schema or chooses a tool, not both",
        node_pointer(index, field),
        node_id=node.id,
        hint="split it: one llm node with `available_tools` (and a `tool_call` node), then "
        "one with `response_schema`",
    )
