"""Tool arguments: checked against the tool's argument schema, normalized where the intent
is unambiguous.

Normalization (the only conversions made, each one where no other reading is possible):

* an object given where only a list is accepted becomes a one-item list;
* an object given where only a string is accepted yields its ``content``, ``text`` or
  ``response`` string field, else its JSON; a list given there yields its JSON;
* ``None`` given for an optional argument that does not accept null is left out (the tool's
  default applies).

Everything else must already match: an unknown argument, a missing required one or a wrong
type is a :class:`sea.errors.ToolArgumentError` naming the argument, the expected and the
actual type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema.exceptions import ValidationError
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from sea.errors import ToolArgumentError
from sea.jsontypes import json_text, json_type
from sea.lang.jsonschemas import SchemaValidator, validator

TEXT_FIELDS = ("content", "text", "response")
"""Fields of a structured result that carry its text, in order of preference."""

_PREVIEW = 60


def tool_schema(tool: BaseTool) -> dict[str, Any]:
    """The JSON Schema of the arguments a model or a node may pass to ``tool``.

    LangChain's ``tool_call_schema`` leaves out the extension keywords of a pydantic
    argument model (``json_schema_extra``); the ``x-sea-*`` ones (such as ``x-sea-ref``) of
    each argument are copied back from the model's own schema.
    """
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        return schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        found = schema.model_json_schema()
        source = tool.args_schema
        if isinstance(source, type) and issubclass(source, BaseModel) and source is not schema:
            _copy_extensions(found, source.model_json_schema())
        return found
    return {"type": "object", "properties": {}}


def _copy_extensions(target: dict[str, Any], source: Mapping[str, Any]) -> None:
    properties = target.get("properties") or {}
    for name, prop in (source.get("properties") or {}).items():
        if name in properties and isinstance(prop, Mapping):
            for key, value in prop.items():
                if key.startswith("x-sea-"):
                    properties[name].setdefault(key, value)


def prepare_arguments(
    tool_name: str,
    schema: Mapping[str, Any],
    args: Mapping[str, Any],
    *,
    playbook: str | None,
    node: str | None,
    check: SchemaValidator | None = None,
) -> dict[str, Any]:
    """Normalize ``args`` for ``schema`` and check them; the arguments to call the tool with.

    ``check`` is the schema's validator when the caller keeps one (building it costs more
    than most checks).

    Raises:
        ToolArgumentError: an argument is unknown, missing or of the wrong type.
    """
    return ArgumentSchema(tool_name, schema, check).prepare(args, playbook=playbook, node=node)


class ArgumentSchema:
    """A tool's argument schema read once for :func:`prepare_arguments`: each argument's
    accepted types (worked out on first use) and the validator, kept for every call.

    Args:
        tool_name: The tool's name, for messages.
        schema: The tool's argument schema; it must not change afterwards.
        check: The schema's validator (built here when not given).
    """

    __slots__ = ("_known", "_properties", "_required", "_types", "check", "schema", "tool_name")

    def __init__(
        self, tool_name: str, schema: Mapping[str, Any], check: SchemaValidator | None = None
    ) -> None:
        self.tool_name = tool_name
        self.schema = schema
        self.check = check if check is not None else validator(schema)
        self._properties: Mapping[str, Any] = schema.get("properties") or {}
        self._required = frozenset(schema.get("required") or ())
        self._known = ", ".join(self._properties) or "none"
        self._types: dict[str, frozenset[str]] = {}

    def prepare(
        self, args: Mapping[str, Any], *, playbook: str | None, node: str | None
    ) -> dict[str, Any]:
        """:func:`prepare_arguments` for this schema."""
        properties, types_of = self._properties, self._types
        prepared: dict[str, Any] = {}
        for name, value in args.items():
            types = types_of.get(name)
            if types is None:
                if name not in properties:
                    unknown = next(n for n in args if n not in properties)
                    raise ToolArgumentError(
                        f"tool {self.tool_name!r} has no argument {unknown!r} "
                        f"(its arguments: {self._known})",
                        playbook=playbook,
                        node=node,
                    )
                types = types_of[name] = accepted_types(properties[name], self.schema)
            if value is None and types and "null" not in types and name not in self._required:
                continue
            prepared[name] = normalize_value(value, types)
        problem = _first_problem(self.tool_name, self.schema, prepared, self.check)
        if problem is not None:
            raise ToolArgumentError(problem, playbook=playbook, node=node)
        return prepared


def accepted_types(prop: Mapping[str, Any], root: Mapping[str, Any]) -> frozenset[str]:
    """The JSON types a property schema accepts (empty when the schema does not say)."""
    prop = resolve_schema_ref(prop, root)
    declared = prop.get("type")
    types: set[str] = set()
    if isinstance(declared, str):
        types.add(declared)
    elif isinstance(declared, list):
        types.update(t for t in declared if isinstance(t, str))
    for keyword in ("anyOf", "oneOf"):
        for member in prop.get(keyword) or ():
            types |= accepted_types(member, root)
    if not types and ("properties" in prop or "$ref" in prop):
        types.add("object")
    return frozenset(types)


def normalize_value(value: Any, types: frozenset[str]) -> Any:
    """``value`` converted to one of ``types`` where the intent is unambiguous, else as is."""
    actual = json_type(value)
    if not types or actual in types or (actual == "integer" and "number" in types):
        return value
    if actual == "object" and types & {"array", "string"} == {"array"}:
        return [value]
    if actual == "object" and types & {"array", "string"} == {"string"}:
        for field in TEXT_FIELDS:
            if isinstance(value.get(field), str):
                return value[field]
        return json_text(value)
    if actual == "array" and "string" in types:
        return json_text(value)
    return value


def _first_problem(
    tool_name: str, schema: Mapping[str, Any], args: dict[str, Any], check: SchemaValidator
) -> str | None:
    if check.is_valid(args):
        return None
    errors = sorted(
        check.iter_errors(args),
        key=lambda e: (list(e.absolute_path), e.validator != "type"),
    )
    if not errors:
        return None
    return _describe(tool_name, schema, args, errors[0])


def _describe(
    tool_name: str, schema: Mapping[str, Any], args: dict[str, Any], error: ValidationError
) -> str:
    path = list(error.absolute_path)
    if not path:
        if error.validator == "required":
            return f"tool {tool_name!r}: {error.message.replace('property', 'argument')}"
        return f"tool {tool_name!r}: {error.message}"
    name = str(path[0])
    where = "/".join(str(p) for p in path)
    if error.validator in ("type", "anyOf", "oneOf") and len(path) == 1:
        prop = (schema.get("properties") or {}).get(name, {})
        accepted = accepted_types(prop, schema)
        value = args[name]
        if json_type(value) in accepted and error.context:  # right type, wrong inside
            deepest = max(error.context, key=lambda e: len(e.absolute_path))
            return _describe(tool_name, schema, args, deepest)
        return f"tool {tool_name!r}: argument {name!r} {type_mismatch(accepted, value)}"
    return f"tool {tool_name!r}: argument {name!r} (at {where}): {error.message}"


def type_mismatch(accepted: frozenset[str], value: Any) -> str:
    """``expects integer or string, got boolean (true)``: what a wrong-typed argument reads."""
    expected = " or ".join(sorted(accepted)) or "another type"
    return f"expects {expected}, got {json_type(value)} ({preview(value)})"


def resolve_schema_ref(prop: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``$defs`` entry a ``{"$ref": "#/$defs/Name"}`` schema points at, else ``prop``."""
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = (root.get("$defs") or {}).get(ref.removeprefix("#/$defs/"))
        if isinstance(target, Mapping):
            return target
    return prop


def preview(value: Any) -> str:
    """``value``'s JSON text, cut to a short preview for messages."""
    text = json_text(value)
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"


