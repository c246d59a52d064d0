"""The plan an ``actions`` node asks its model for: its JSON Schema, and what is wrong with one.

A plan is ``{"actions": [{"action_id", "tool", "parameters"}], "reason"}``. The schema is
built from the offered tools: each action is one of the tools (``tool`` is that tool's
name), its ``parameters`` follow that tool's argument schema, and any parameter value may
instead be a string ``ref:<action_id>``. A constrained model (the local model's grammar,
a provider's JSON Schema mode) can then only produce plans of the offered tools.

The schema cannot say everything: :func:`plan_problem` finds what it cannot (a ``ref:`` to
an id that is not an *earlier* action's, a duplicate id) and, for a model without
constrained output, says precisely what the schema's own validator would say vaguely (an
unknown tool, a missing or unknown parameter, too many actions). Its words go back to the
model when it is asked again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sea.engine.actions.catalogue import ToolSpec
from sea.engine.tools.refs import REF_PREFIX, ref_target
from sea.jsontypes import json_text
from sea.lang.jsonschemas import validator

ACTION_ID_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
"""An action id: a letter, then letters, digits and ``_`` (at most 64 characters)."""
REF_PATTERN = r"^ref:[A-Za-z][A-Za-z0-9_]{0,63}$"
"""A parameter value that names an earlier action's result."""

_ACTION_ID = re.compile(ACTION_ID_PATTERN)
_MAX_PROBLEMS = 5
_PREVIEW = 60


@dataclass(frozen=True, slots=True)
class PlannedAction:
    """One action of an accepted plan."""

    action_id: str
    tool: str
    parameters: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The action as the model wrote it."""
        return {"action_id": self.action_id, "tool": self.tool, "parameters": self.parameters}


def plan_schema(catalogue: Sequence[ToolSpec], max_actions: int) -> dict[str, Any]:
    """The JSON Schema of a plan of at most ``max_actions`` actions of ``catalogue``'s tools."""
    defs: dict[str, Any] = {}
    variants = [_action_schema(spec, index, defs) for index, spec in enumerate(catalogue)]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "actions": {
                "type": "array",
                "maxItems": max_actions,
                "description": "The actions, run in this order.",
                "items": variants[0] if len(variants) == 1 else {"anyOf": variants},
            },
            "reason": {"type": "string", "description": "Why these actions, in one sentence."},
        },
        "required": ["actions", "reason"],
        "additionalProperties": False,
    }
    if defs:
        schema["$defs"] = defs
    return schema


def _action_schema(spec: ToolSpec, index: int, defs: dict[str, Any]) -> dict[str, Any]:
    source = dict(spec.parameters)
    prefix = f"t{index}_"
    for name, definition in (source.get("$defs") or {}).items():
        defs[prefix + name] = _rebased(definition, prefix)
    properties: Mapping[str, Any] = source.get("properties") or {}
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            name: {"anyOf": [_rebased(prop, prefix), {"type": "string", "pattern": REF_PATTERN}]}
            for name, prop in properties.items()
        },
        "additionalProperties": False,
    }
    required = [name for name in source.get("required") or () if name in properties]
    if required:
        parameters["required"] = required
    return {
        "type": "object",
        "properties": {
            "action_id": {"type": "string", "pattern": ACTION_ID_PATTERN},
            "tool": {"enum": [spec.name]},
            "parameters": parameters,
        },
        "required": ["action_id", "tool", "parameters"],
        "additionalProperties": False,
    }


def _rebased(schema: Any, prefix: str) -> Any:
    """``schema`` with its local ``$ref``s pointing at the prefixed ``$defs`` entries."""
    if isinstance(schema, Mapping):
        rebased = {key: _rebased(value, prefix) for key, value in schema.items()}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            rebased["$ref"] = "#/$defs/" + prefix + ref.removeprefix("#/$defs/")
        return rebased
    if isinstance(schema, list):
        return [_rebased(item, prefix) for item in schema]
    return schema


def plan_problem(value: Any, catalogue: Sequence[ToolSpec], max_actions: int) -> str | None:
    """What is wrong with ``value`` as a plan, in words for the model; None when usable."""
    if not isinstance(value, Mapping) or not isinstance(value.get("actions"), list):
        return None  # the schema's validator says it (not an object, no list of actions)
    actions: list[Any] = value["actions"]
    problems: list[str] = []
    if len(actions) > max_actions:
        problems.append(
            f"the plan has {len(actions)} actions; at most {max_actions} are allowed"
        )
    tools = {spec.name: spec for spec in catalogue}
    seen: dict[str, int] = {}
    for index, action in enumerate(actions):
        problems.extend(_action_problems(index, action, tools, seen, _ids(actions)))
    if not problems:
        return None
    shown = problems[:_MAX_PROBLEMS]
    more = len(problems) - len(shown)
    if more > 0:
        shown.append(f"and {more} more problem{'s' if more > 1 else ''}")
    return "; ".join(shown)


def _ids(actions: list[Any]) -> list[str | None]:
    return [
        a.get("action_id") if isinstance(a, Mapping) and isinstance(a.get("action_id"), str)
        else None
        for a in actions
    ]


def _action_problems(
    index: int,
    action: Any,
    tools: Mapping[str, ToolSpec],
    seen: dict[str, int],
    ids: list[str | None],
) -> list[str]:
    label = f"action {index + 1}"
    if not isinstance(action, Mapping):
        return [f"{label} is not an object (an action is {{action_id, tool, parameters}})"]
    problems: list[str] = []
    extra = sorted(set(action) - {"action_id", "tool", "parameters"})
    if extra:
        problems.append(f"{label} has unknown field {extra[0]!r} (fields: action_id, tool, "
                        "parameters)")
    action_id = action.get("action_id")
    if not isinstance(action_id, str) or not _ACTION_ID.match(action_id):
        problems.append(f"{label} needs an action_id: a short name of letters, digits and _ "
                        f"starting with a letter (got {_preview(action_id)})")
    else:
        label = f"action {action_id!r}"
        if action_id in seen:
            problems.append(f"action_id {action_id!r} is used twice (actions {seen[action_id]} "
                            f"and {index + 1}); give every action its own id")
        else:
            seen[action_id] = index + 1
    tool = action.get("tool")
    if tool not in tools:
        known = ", ".join(tools)
        problems.append(f"{label} names tool {_preview(tool)}, which is not available "
                        f"(available tools: {known})")
        return problems
    parameters = action.get("parameters")
    if not isinstance(parameters, Mapping):
        problems.append(f"{label}: parameters must be an object of the tool's arguments")
        return problems
    problems.extend(_parameter_problems(label, tools[str(tool)], parameters, index, ids))
    return problems


def _parameter_problems(
    label: str, spec: ToolSpec, parameters: Mapping[str, Any], index: int, ids: list[str | None]
) -> list[str]:
    schema = spec.parameters
    properties: Mapping[str, Any] = schema.get("properties") or {}
    problems: list[str] = []
    for name in parameters:
        if name not in properties:
            known = ", ".join(properties) or "none"
            problems.append(f"{label}: tool {spec.name!r} has no parameter {name!r} "
                            f"(its parameters: {known})")
    for name in schema.get("required") or ():
        if name not in parameters:
            problems.append(f"{label}: tool {spec.name!r} needs parameter {name!r}")
    literal: dict[str, Any] = {}
    for name, value in parameters.items():
        if name not in properties:
            continue
        if isinstance(value, str) and value.startswith(REF_PREFIX):
            problem = _ref_problem(label, name, value, index, ids)
            if problem is not None:
                problems.append(problem)
            continue
        literal[name] = value
    problems.extend(_literal_problems(label, spec, literal))
    return problems


def _ref_problem(
    label: str, name: str, value: str, index: int, ids: list[str | None]
) -> str | None:
    target = ref_target(value)
    rule = "a ref names only an earlier action's action_id"
    if target is None:
        return f"{label}: parameter {name!r} is {value!r}, not a ref of the form ref:<action_id>"
    if target == ids[index]:
        return f"{label}: parameter {name!r} refers to its own action ({value}); {rule}"
    if target in ids[index + 1:]:
        return (f"{label}: parameter {name!r} refers to {target!r}, which comes after it; "
                f"{rule}")
    if target not in ids[:index]:
        earlier = ", ".join(i for i in ids[:index] if i) or "none"
        return (f"{label}: parameter {name!r} refers to {target!r}, which is no action's id; "
                f"{rule} (earlier actions: {earlier})")
    return None


def _literal_problems(label: str, spec: ToolSpec, literal: Mapping[str, Any]) -> list[str]:
    """Schema violations of the parameters that are not refs (required ones not asked)."""
    schema = {key: value for key, value in spec.parameters.items() if key != "required"}
    problems = []
    for error in sorted(validator(schema).iter_errors(dict(literal)), key=lambda e: list(e.path)):
        where = "/".join(str(p) for p in error.absolute_path)
        if not where:
            continue  # unknown and missing parameters are reported above
        problems.append(f"{label}: parameter {where!r}: {error.message}")
    return problems


def accepted_actions(value: Mapping[str, Any]) -> tuple[list[PlannedAction], str]:
    """The actions and reason of a plan :func:`plan_problem` accepted."""
    actions = [
        PlannedAction(str(a["action_id"]), str(a["tool"]), dict(a.get("parameters") or {}))
        for a in value.get("actions") or []
    ]
    return actions, str(value.get("reason") or "")


def _preview(value: Any) -> str:
    text = json_text(value)
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"
