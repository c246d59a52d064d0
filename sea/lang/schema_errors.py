"""Turn JSON Schema validation errors into issues: one per mistake, with a fix hint."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from sea.jsontypes import json_type
from sea.lang import codes
from sea.lang.hints import did_you_mean, unknown_field_hint
from sea.lang.issues import Issue, error
from sea.lang.locate import join_pointer
from sea.lang.vocabulary import BUILTIN_NODE_TYPES, NodeTypes

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError


def _article(type_name: str) -> str:
    return {
        "null": "null",
        "array": "an array",
        "object": "an object",
        "integer": "an integer",
    }.get(type_name, f"a {type_name}")


class SchemaErrorTranslator:
    """Translates the errors of one validated object (the document or one node).

    Args:
        prefix: Pointer segments of the validated object inside the document.
        kind: What the object is, for hints: a node type, or ``playbook``.
        definitions: The schema's ``$defs`` (to describe ``$ref`` alternatives).
        node_id: The node's id, when the object is a node.
        types: The node types (for what can fail and each type's known mistakes).
    """

    def __init__(
        self,
        prefix: Sequence[str | int],
        kind: str,
        definitions: dict[str, Any],
        node_id: str | None = None,
        types: NodeTypes = BUILTIN_NODE_TYPES,
    ) -> None:
        self.prefix = tuple(prefix)
        self.kind = kind
        self.definitions = definitions
        self.node_id = node_id
        self.types = types

    def _pointer(self, path: Iterable[str | int]) -> str:
        return join_pointer(*self.prefix, *path)

    def _issue(self, code: str, message: str, path: Sequence[str | int], **kw: Any) -> Issue:
        return error(code, message, self._pointer(path), node_id=self.node_id, **kw)

    def translate(self, errors: Iterable[ValidationError]) -> list[Issue]:
        """Issues for all errors, a mistaken field name reported once."""
        errors = list(errors)
        merged: set[tuple[tuple[str | int, ...], str]] = set()
        issues: list[Issue] = []
        for err in errors:
            if err.validator == "additionalProperties":
                issues.extend(self._unknown_fields(err, merged))
        for err in errors:
            if err.validator == "required":
                issues.extend(self._missing(err, merged))
            elif err.validator != "additionalProperties":
                issues.extend(self._other(err))
        return issues

    def _kind_at(self, path: Sequence[str | int]) -> str:
        if not path:
            return self.kind
        if path[0] == "input_schema":
            return "input parameter"
        return str(path[-1] if not isinstance(path[-1], int) else path[-2])

    def _unknown_fields(
        self, err: ValidationError, merged: set[tuple[tuple[str | int, ...], str]]
    ) -> list[Issue]:
        path = tuple(err.absolute_path)
        instance: dict[str, Any] = cast(dict[str, Any], err.instance)
        properties = _schema(err).get("properties", {})
        missing = [r for r in _schema(err).get("required", []) if r not in instance]
        issues = []
        for name in instance:
            if name in properties:
                continue
            issues.append(self._unknown_field(path, name, properties, missing, merged))
        return issues

    def _unknown_field(
        self,
        path: tuple[str | int, ...],
        name: str,
        properties: dict[str, Any],
        missing: list[str],
        merged: set[tuple[tuple[str | int, ...], str]],
    ) -> Issue:
        where = (*path, name)
        kind = self._kind_at(path)
        model = self.types.models.get(self.kind) if not path else None
        if name == "error_next" and model is not None and not model.fallible:
            fallible = [n for n, m in self.types.models.items() if m.fallible]
            listed = ", ".join(fallible[:-1]) + " and " + fallible[-1] if fallible else "no"
            return self._issue(
                codes.ERROR_NEXT_NOT_FALLIBLE,
                f"`error_next` on a `{self.kind}` node, which cannot fail",
                where,
                at_key=True,
                hint=f"only {listed} nodes can fail; remove "
                "`error_next` (use `next` or `conditional_next`)",
            )
        required = did_you_mean(name, missing)
        if required is not None:
            merged.add((path, required))
            return self._issue(
                codes.UNKNOWN_FIELD,
                f"unknown field `{name}` on {_describe(kind)}, and its required field "
                f"`{required}` is missing",
                where,
                at_key=True,
                hint=f"did you mean `{required}`?",
            )
        return self._issue(
            codes.UNKNOWN_FIELD,
            f"unknown field `{name}` on {_describe(kind)}",
            where,
            at_key=True,
            hint=unknown_field_hint(
                kind, name, properties, model.known_mistakes if model is not None else None
            ),
        )

    def _missing(
        self, err: ValidationError, merged: set[tuple[tuple[str | int, ...], str]]
    ) -> list[Issue]:
        path = tuple(err.absolute_path)
        issues = []
        for name in _value(err):
            if name in cast(dict[str, Any], err.instance) or (path, name) in merged:
                continue
            described = _schema(err).get("properties", {}).get(name, {}).get("description")
            issues.append(
                self._issue(
                    codes.MISSING_FIELD,
                    f"missing required field `{name}` on {_describe(self._kind_at(path))}",
                    path,
                    hint=f"`{name}`: {described}" if described else None,
                )
            )
        return issues

    def _other(self, err: ValidationError) -> list[Issue]:
        if err.validator in ("anyOf", "oneOf"):
            return self._alternatives(err)
        return [self._single(err)]

    def _single(self, err: ValidationError) -> Issue:
        path = tuple(err.absolute_path)
        field = _field_name(path)
        validator = err.validator
        if validator == "type":
            return self._type(err, path, field, [_value(err)])
        if validator in ("enum", "const"):
            allowed = _value(err) if validator == "enum" else [_value(err)]
            return self._enum(err.instance, path, field, allowed)
        if validator == "pattern":
            return self._issue(
                codes.BAD_PATTERN,
                f"{field} {err.instance!r} does not match the pattern {_value(err)}",
                path,
                hint=_pattern_hint(field, err.instance),
            )
        return self._issue(codes.INVALID_VALUE, f"{field}: {err.message}", path)

    def _type(
        self, err: ValidationError, path: Sequence[str | int], field: str, expected: list[Any]
    ) -> Issue:
        flat = [t for e in expected for t in (e if isinstance(e, list) else [e])]
        actual = json_type(err.instance)
        if field == "`conditional_next`" and isinstance(err.instance, list):
            return self._issue(
                codes.CONDITIONAL_NEXT_LIST,
                "`conditional_next` is a list; it must be one object",
                path,
                hint='write {"field": "decision.flag", "operator": "eq", "cases": {"true": '
                '"node_a", "false": "node_b"}, "default": "node_c"}; the list form '
                '[{"condition": …, "next": …}] is not supported',
            )
        wanted = " or ".join(_article(t) for t in dict.fromkeys(flat))
        return self._issue(
            codes.WRONG_TYPE, f"{field} must be {wanted}, not {_article(actual)}", path
        )

    def _enum(self, value: Any, path: Sequence[str | int], field: str, allowed: list[Any]) -> Issue:
        shown = ", ".join(repr(a) if not isinstance(a, str) else f"`{a}`" for a in allowed)
        close = (
            did_you_mean(value, [a for a in allowed if isinstance(a, str)])
            if isinstance(value, str)
            else None
        )
        hint = f"did you mean `{close}`? Allowed: {shown}" if close else f"allowed: {shown}"
        return self._issue(
            codes.BAD_ENUM, f"{field} is {value!r}, which is not allowed", path, hint=hint
        )

    def _branch_types(self, branch: dict[str, Any]) -> list[str]:
        if "$ref" in branch:
            branch = self.definitions.get(branch["$ref"].rsplit("/", 1)[-1], {})
        if "type" in branch:
            kind = branch["type"]
            return list(kind) if isinstance(kind, list) else [kind]
        if "const" in branch or "enum" in branch:
            return ["enum"]
        return []

    def _alternatives(self, err: ValidationError) -> list[Issue]:
        path = tuple(err.absolute_path)
        field = _field_name(path)
        branches: list[dict[str, Any]] = _value(err)
        actual = json_type(err.instance)
        matching = [
            i
            for i, branch in enumerate(branches)
            if actual in self._branch_types(branch)
            or (actual == "integer" and "number" in self._branch_types(branch))
        ]
        if len(matching) == 1:
            inner = [e for e in err.context or [] if e.relative_schema_path[0] == matching[0]]
            issues = self.translate(inner)
            if issues:
                return issues
        enums = [b for b in branches if "enum" in b or "const" in b]
        if enums and isinstance(err.instance, str):
            allowed = [v for b in enums for v in b.get("enum", [b.get("const")])]
            return [self._enum(err.instance, path, field, allowed)]
        types = [t for b in branches for t in self._branch_types(b) if t != "enum"]
        return [self._type(err, path, field, types or ["a valid value"])]


def _schema(err: ValidationError) -> dict[str, Any]:
    schema = err.schema
    return cast(dict[str, Any], schema) if isinstance(schema, dict) else {}


def _value(err: ValidationError) -> Any:
    return cast(Any, err.validator_value)


def _field_name(path: Sequence[str | int]) -> str:
    names = [p for p in path if not isinstance(p, int)]
    return f"`{names[-1]}`" if names else "the value"


def _describe(kind: str) -> str:
    if kind in ("playbook", "input parameter"):
        return f"the {kind}"
    return f"`{kind}`"


def _pattern_hint(field: str, value: Any) -> str | None:
    if field == "`name`" or field == "`playbook`":
        if isinstance(value, str):
            fixed = "".join(c if c.isalnum() or c == "_" else "_" for c in value.lower())
            return f"use lowercase letters, digits and `_`, e.g. `{fixed}`"
    if field == "`id`":
        return "node ids use letters, digits, `_` and `-`"
    return None
