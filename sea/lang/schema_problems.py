"""The problems of a schema found before it is used: patterns RE2 cannot run and ``$ref``s
that do not resolve (:func:`schema_problems`; ``sea validate`` and the call path report
them)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sea.lang.linear_regex import Unusable, compiled

Path = tuple[str | int, ...]
"""Where in a schema: keys and indices from its root."""


_SINGLE = (
    "additionalProperties", "unevaluatedProperties", "items", "contains", "propertyNames",
    "not", "if", "then", "else", "unevaluatedItems",
)
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """A problem of a schema found before it is used.

    Attributes:
        path: Where, as keys and indices from the schema's root.
        message: What is wrong, in one sentence.
        kind: ``unsupported_pattern`` (RE2 lacks a feature the pattern uses),
            ``invalid_pattern`` (no regex at all) or ``unresolved_ref``.
    """

    path: Path
    message: str
    kind: Literal["unsupported_pattern", "invalid_pattern", "unresolved_ref"]


def _subschemas(schema: Mapping[str, Any], path: Path) -> Iterator[tuple[Any, Path]]:
    for key in _SINGLE:
        if key in schema:
            yield schema[key], (*path, key)
    for key in _MAPS:
        children = schema.get(key)
        if isinstance(children, Mapping):
            for name, child in children.items():
                yield child, (*path, key, name)
    for key in _LISTS:
        children = schema.get(key)
        if isinstance(children, list):
            for i, child in enumerate(children):
                yield child, (*path, key, i)


def _pattern_issue(pattern: str, path: Path) -> SchemaProblem | None:
    found = compiled(pattern)
    if not isinstance(found, Unusable):
        return None
    kind: Literal["unsupported_pattern", "invalid_pattern"] = (
        "unsupported_pattern" if found.unsupported else "invalid_pattern"
    )
    return SchemaProblem(path, f"the pattern `{pattern}` {found.reason}", kind)


def _ref_issue(resolver: Any, ref: str, path: Path) -> SchemaProblem | None:
    from referencing.exceptions import Unresolvable

    try:
        resolver.lookup(ref)
    except Unresolvable:
        where = "outside the schema (remote references are not fetched)"
        if ref.startswith("#"):
            where = "within the schema"
        return SchemaProblem(path, f"`$ref` `{ref}` does not resolve {where}", "unresolved_ref")
    return None


def _nodes(schema: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every schema object in ``schema`` (the places :func:`schema_problems` walks)."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            yield node
            stack.extend(child for child, _ in _subschemas(node, ()))


def _resource(schema: Mapping[str, Any]) -> Any:
    from referencing.jsonschema import DRAFT202012

    return DRAFT202012.create_resource(schema)


def _resolver(schema: Mapping[str, Any]) -> Any:
    """A resolver of the ``$ref``s in ``schema`` (nothing is retrieved)."""
    from referencing import Registry

    return Registry().resolver_with_root(_resource(schema))


def schema_problems(schema: Any) -> list[SchemaProblem]:
    """Patterns RE2 cannot run and ``$ref``s that do not resolve, anywhere in ``schema``.

    Only the places that hold schemas are walked (not ``enum``, ``const``, ``default``…),
    iteratively. The metaschema's own checks are not repeated here.
    """
    if not isinstance(schema, Mapping):
        return []
    # a schema without `$ref` needs no resolver (nor the import of `referencing`)
    refers = any(isinstance(node.get("$ref"), str) for node in _nodes(schema))
    root = _resolver(schema) if refers else None
    problems: list[SchemaProblem] = []
    stack: list[tuple[Any, Path, Any]] = [(schema, (), root)]
    while stack:
        node, path, resolver = stack.pop()
        if not isinstance(node, Mapping):
            continue
        if resolver is not None and path and isinstance(node.get("$id"), str):
            resolver = resolver.in_subresource(_resource(node))
        pattern = node.get("pattern")
        if isinstance(pattern, str) and (found := _pattern_issue(pattern, (*path, "pattern"))):
            problems.append(found)
        patterns = node.get("patternProperties")
        for key in patterns if isinstance(patterns, Mapping) else ():
            if found := _pattern_issue(key, (*path, "patternProperties", key)):
                problems.append(found)
        ref = node.get("$ref")
        if isinstance(ref, str) and (found := _ref_issue(resolver, ref, (*path, "$ref"))):
            problems.append(found)
        stack.extend((child, where, resolver) for child, where in _subschemas(node, path))
    problems.sort(key=lambda p: [str(part) for part in p.path])
    return problems

