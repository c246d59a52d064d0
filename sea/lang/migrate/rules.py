"""The rewrites of a migration (``sea migrate``): each rule a SAIVerse playbook relied on,
written into the playbook where SEA's language can say it (see :mod:`sea.lang.migrate`).

:func:`rewrite` applies every rule to one parsed document, recording each edit in a
:class:`Rewrite`; the text edits themselves are :class:`~sea.lang.jsonedit.JsonTextEditor`'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, get_args

from sea.lang import exec_targets, saiverse
from sea.lang.checks.cases import subschema
from sea.lang.hints import KNOWN_MISTAKES, TYPE_NAME_FIXES
from sea.lang.jsonedit import JsonTextEditor
from sea.lang.locate import escape_pointer, join_pointer
from sea.lang.models import Playbook
from sea.lang.node import PlaybookIndex
from sea.lang.node_models import ParamType
from sea.lang.vocabulary import BUILTIN_NODE_TYPES, NodeTypes

_DID_YOU_MEAN = re.compile(r"^did you mean `(\w+)`\?")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
_SCHEMA_ONE = (
    "items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
    "unevaluatedItems", "unevaluatedProperties",
)
_PARAM_TYPES = frozenset(get_args(ParamType))
_PARAM_SOURCE = "source"
_INPUT_TEMPLATE = "input_template"
_ARGS_AFTER = ("playbook", "args_source", "playbook_source", "type")
"""Where a new ``args`` member goes in a call node: after the first of these it has."""
_DROPPED_TOP_LEVEL = tuple(
    sorted(
        {name for (kind, name) in KNOWN_MISTAKES
         if kind == "playbook" and name not in Playbook.model_fields}
        | {"version"}  # accepted (SAIVerse writes one) but of no use: migrated away
    )
)
"""Top-level fields SAIVerse ignored and SEA rejects with a known hint: removed."""

LEFT_IMPLICIT: tuple[str, ...] = tuple(
    dict.fromkeys(
        [rule.name + ("<name>" if rule.prefix else "") for rule in saiverse.RUN_VARIABLES]
        + [
            rule.name + ("<name>" if rule.prefix else "")
            for rules in saiverse.NODE_VARIABLES.values()
            for rule in rules
            if rule.condition is not saiverse.Condition.EXECUTED_PLAYBOOKS_INIT
            and rule.name != saiverse.EXECUTED_PLAYBOOKS
        ]
    )
)
"""The variables SAIVerse's runtime provides that a migration leaves implicit: SEA's
language declares a variable only by defining it (a parameter, a ``set``, an output key),
and these get their values from the engine or the host as the run goes."""


@dataclass(frozen=True)
class Change:
    """One rewrite, where it was made and what it did."""

    pointer: str
    what: str


@cache
def hinted_renames(node_type: str, types: NodeTypes = BUILTIN_NODE_TYPES) -> Mapping[str, str]:
    """Field SAIVerse dropped → the SEA field it meant, for one node type: the compatibility
    rules' :data:`~sea.lang.saiverse.RENAMED_FIELDS`, then every known mistake of the node
    type whose hint is ``did you mean `field`?`` naming one of its fields."""
    model = types.models.get(node_type)
    renames: dict[str, str] = dict(saiverse.RENAMED_FIELDS.get(node_type, {}))
    if model is not None:
        for wrong, hint in model.known_mistakes.items():
            found = _DID_YOU_MEAN.match(hint)
            if found and found.group(1) in model.model_fields:
                renames.setdefault(wrong, found.group(1))
    return renames


class _NodeView:
    """A node's raw JSON object read like a node model (what :mod:`sea.lang.saiverse`'s
    conditions take): a missing field reads as ``None``."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self._raw = raw

    def __getattr__(self, name: str) -> Any:
        return self._raw.get(name)


@dataclass
class Rewrite:
    """One pass of rewrites over a document: the edits made to its text and what each
    changed."""

    document: dict[str, Any]
    editor: JsonTextEditor
    index: PlaybookIndex | None
    changes: list[Change] = field(default_factory=list)

    def note(self, pointer: str, what: str) -> None:
        self.changes.append(Change(pointer, what))


def _nodes(document: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    nodes = document.get("nodes")
    for index, node in enumerate(nodes if isinstance(nodes, list) else ()):
        if isinstance(node, dict) and isinstance(node.get("type"), str):
            yield join_pointer("nodes", index), node


def _rename_fields(plan: Rewrite, pointer: str, node: dict[str, Any]) -> None:
    for wrong, right in hinted_renames(node["type"]).items():
        if wrong in node and right not in node:
            where = f"{pointer}/{escape_pointer(wrong)}"
            plan.editor.rename(where, right)
            plan.note(where, f"renamed `{wrong}` to `{right}` (SAIVerse ignored `{wrong}`)")


def _declares_string(document: Mapping[str, Any], field_path: str) -> bool:
    """A response_schema declares the compared value a string (``"True"`` is then text)."""
    root, *rest = field_path.split(".")
    for _, node in _nodes(document):
        schema = node.get("response_schema")
        if node.get("output_key") == root and isinstance(schema, dict):
            found = subschema(schema, rest)
            kind = found.get("type") if found else None
            if kind == "string" or (isinstance(kind, list) and "string" in kind):
                return True
    return False


def _case_keys(plan: Rewrite, pointer: str, node: dict[str, Any]) -> None:
    branch = node.get("conditional_next")
    if not isinstance(branch, dict) or not isinstance(branch.get("cases"), dict):
        return
    field_path = branch.get("field")
    if isinstance(field_path, str) and _declares_string(plan.document, field_path):
        return
    cases = branch["cases"]
    for key in cases:
        lowered = saiverse.lowercase_case_key(key)
        if lowered != key and lowered not in cases:
            where = f"{pointer}/conditional_next/cases/{escape_pointer(key)}"
            plan.editor.rename(where, lowered)
            plan.note(where, f'case key "{key}" written "{lowered}" (a JSON boolean)')


def _schema_types(plan: Rewrite, pointer: str, schema: Any) -> None:
    """Fix Python type names (``int``) in a JSON Schema, recursively."""
    if isinstance(schema, list):
        for position, item in enumerate(schema):
            _schema_types(plan, f"{pointer}/{position}", item)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if isinstance(kind, str) and kind in TYPE_NAME_FIXES:
        plan.editor.replace(f"{pointer}/type", TYPE_NAME_FIXES[kind])
        plan.note(f"{pointer}/type", f'type "{kind}" written "{TYPE_NAME_FIXES[kind]}"')
    elif isinstance(kind, list) and any(k in TYPE_NAME_FIXES for k in kind):
        fixed = [TYPE_NAME_FIXES.get(k, k) if isinstance(k, str) else k for k in kind]
        plan.editor.replace(f"{pointer}/type", fixed)
        plan.note(f"{pointer}/type", f"types {kind} written {fixed}")
    for key, value in schema.items():
        where = f"{pointer}/{escape_pointer(key)}"
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                _schema_types(plan, f"{where}/{escape_pointer(name)}", sub)
        elif key in _SCHEMA_LISTS or key in _SCHEMA_ONE:
            _schema_types(plan, where, value)


def _param_types(plan: Rewrite) -> None:
    params = plan.document.get("input_schema")
    for position, param in enumerate(params if isinstance(params, list) else ()):
        if not isinstance(param, dict):
            continue
        for key in ("type", "param_type"):
            value = param.get(key)
            fixed = TYPE_NAME_FIXES.get(value) if isinstance(value, str) else None
            if fixed in _PARAM_TYPES:
                where = join_pointer("input_schema", position, key)
                plan.editor.replace(where, fixed)
                plan.note(where, f'type "{value}" written "{fixed}"')


def _executed_playbooks(plan: Rewrite, pointer: str, node: dict[str, Any]) -> None:
    if node["type"] != "set" or not isinstance(node.get("assignments"), dict):
        return
    declares = any(
        rule.name == saiverse.EXECUTED_PLAYBOOKS for rule in saiverse.provided_by(_NodeView(node))
    )
    assignments = node["assignments"]
    params = plan.document.get("input_schema")
    is_param = any(
        isinstance(p, dict) and p.get("name") == saiverse.EXECUTED_PLAYBOOKS
        for p in (params if isinstance(params, list) else ())
    )
    if not declares or saiverse.EXECUTED_PLAYBOOKS in assignments or is_param:
        return
    where = f"{pointer}/assignments/{saiverse.EXECUTED_PLAYBOOKS_INIT}"
    plan.editor.rename(where, saiverse.EXECUTED_PLAYBOOKS)
    plan.editor.replace(where, [])
    plan.note(
        where,
        f'"{saiverse.EXECUTED_PLAYBOOKS_INIT}": true written as the assignment it stood for, '
        f'"{saiverse.EXECUTED_PLAYBOOKS}": []',
    )


def _takes(plan: Rewrite, node: Mapping[str, Any], name: str) -> bool:
    """The node's callee declares the parameter ``name`` (an ``exec`` callee: assumed)."""
    if node["type"] in saiverse.DYNAMIC_CALL_TYPES:
        return True
    callee = node.get("playbook")
    signature = plan.index.signature(callee) if plan.index and isinstance(callee, str) else None
    return signature is not None and name in signature.params


def _explicit_value(rule: saiverse.ImplicitArgument) -> str | None:
    """The template that states an implicit argument: its first caller variable."""
    variable = next((s for s in rule.sources if not s.startswith("args.")), None)
    return None if variable is None else "{" + variable + "}"


def _sourced_args(plan: Rewrite, node: Mapping[str, Any]) -> dict[str, str]:
    """The arguments a `subplay` callee's parameters took from their legacy `source`
    (`parent.X`: the caller's `X`; `input`: the callee's input), as templates for the
    caller's `args` (those it does not pass already)."""
    callee = node.get("playbook")
    if node["type"] != "subplay" or plan.index is None or not isinstance(callee, str):
        return {}
    signature = plan.index.signature(callee)
    raw_args = node.get("args")
    args: Mapping[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    given_input = args.get("input", node.get(_INPUT_TEMPLATE))
    found: dict[str, str] = {}
    for name, source in (signature.sources if signature is not None else {}).items():
        if name in args or name == "input":
            continue
        if source == "input":
            found[name] = given_input if isinstance(given_input, str) else "{input}"
        elif source.startswith("parent.") and len(source) > len("parent."):
            found[name] = "{" + source.removeprefix("parent.") + "}"
    return found


def _note_sourced(plan: Rewrite, pointer: str, sourced: Mapping[str, str]) -> None:
    for name, value in sourced.items():
        plan.note(
            f"{pointer}/args/{escape_pointer(name)}",
            f"the callee's parameter `source` written as the argument: `{name}` = \"{value}\"",
        )


def _implicit_arguments(plan: Rewrite, pointer: str, node: dict[str, Any]) -> None:
    args = node.get("args")
    if "args" in node and not isinstance(args, dict) or _INPUT_TEMPLATE in node:
        return  # not an object (the validator reports it), or `input_template` gives it
    added: dict[str, str] = {}
    for rule in saiverse.implicit_arguments(node["type"]):
        value = _explicit_value(rule)
        if value is None or rule.name in (args or {}) or not _takes(plan, node, rule.name):
            continue
        added[rule.name] = value
        plan.note(
            f"{pointer}/args/{escape_pointer(rule.name)}",
            f"implicit argument made explicit: `{rule.name}` = \"{value}\"",
        )
    sourced = _sourced_args(plan, node)
    _note_sourced(plan, pointer, sourced)
    added.update(sourced)
    if not added:
        return
    if args is None:
        anchor = next(key for key in (*_ARGS_AFTER, "id") if key in node)
        plan.editor.insert_after(f"{pointer}/{escape_pointer(anchor)}", "args", added)
        return
    for name, value in added.items():
        plan.editor.add_member(f"{pointer}/args", name, value)


def _param_sources(plan: Rewrite) -> None:
    """Remove the parameters' `source`: each `subplay` caller's migration writes it as the
    argument (an `exec` caller cannot be known: it passes the argument or it is null)."""
    params = plan.document.get("input_schema")
    for position, param in enumerate(params if isinstance(params, list) else ()):
        if isinstance(param, dict) and _PARAM_SOURCE in param:
            where = join_pointer("input_schema", position)
            plan.editor.remove_members(where, [_PARAM_SOURCE])
            plan.note(
                f"{where}/{_PARAM_SOURCE}",
                f"removed `{_PARAM_SOURCE}` (its `subplay` callers' migration passes the "
                "argument in `args`)",
            )


def _input_template(plan: Rewrite, pointer: str, node: dict[str, Any], drop: list[str]) -> None:
    """A call's legacy `input_template` becomes the `input` argument it stood for."""
    if node["type"] not in saiverse.IMPLICIT_ARGUMENTS or _INPUT_TEMPLATE not in node:
        return
    template = node[_INPUT_TEMPLATE]
    args = node.get("args")
    where = f"{pointer}/{_INPUT_TEMPLATE}"
    sourced = _sourced_args(plan, node)
    _note_sourced(plan, pointer, sourced)
    if "args" not in node:
        plan.editor.rename(where, "args")
        plan.editor.replace(where, {"input": template, **sourced})
        plan.note(where, "`input_template` written as the argument it stood for, `args.input`")
        return
    drop.append(_INPUT_TEMPLATE)
    if isinstance(args, dict) and "input" not in args:
        plan.editor.add_member(f"{pointer}/args", "input", template)
        plan.note(where, "`input_template` written as the argument it stood for, `args.input`")
    else:
        plan.note(where, "removed `input_template` (`args` gives the input)")
    if isinstance(args, dict):
        for name, value in sourced.items():
            plan.editor.add_member(f"{pointer}/args", name, value)


def _ignored_next(plan: Rewrite, pointer: str, node: dict[str, Any], drop: list[str]) -> None:
    """Remove a `next` that `conditional_next` overrides (SAIVerse and SEA ignore it)."""
    overridden = node["type"] not in saiverse.DYNAMIC_CALL_TYPES or "error_next" not in node
    if "next" in node and isinstance(node.get("conditional_next"), dict) and overridden:
        drop.append("next")
        plan.note(f"{pointer}/next", "removed `next`: `conditional_next` decides where to go")


def _null_action(plan: Rewrite, pointer: str, node: dict[str, Any], drop: list[str]) -> None:
    """Remove an `exec` node's `"action": null` (SAIVerse writes it; it says nothing)."""
    if node["type"] == "exec" and "action" in node and node["action"] is None:
        drop.append("action")
        plan.note(f"{pointer}/action", "removed `\"action\": null` (`exec` has no action)")


def _exec_allow_list(plan: Rewrite, pointer: str, node: dict[str, Any]) -> None:
    """An `exec` node that runs playbooks by a name its playbook spells gets them as its
    explicit `allowed_playbooks`, with the router-callable ones it ran before."""
    if node["type"] != "exec" or "allowed_playbooks" in node or plan.index is None:
        return
    source = node.get("playbook_source", "selected_playbook")
    nodes = plan.document.get("nodes")
    assignments = [
        n["assignments"] for n in (nodes if isinstance(nodes, list) else ())
        if isinstance(n, dict) and n.get("type") == "set" and isinstance(n.get("assignments"), dict)
    ]
    names = plan.index.names()
    spelled = exec_targets.spelled_names(assignments, str(source), names)
    if not spelled:
        return
    routed = [
        name for name in names
        if (signature := plan.index.signature(name)) is not None and signature.router_callable
    ]
    allowed = list(dict.fromkeys([*spelled, *routed]))
    after = "playbook_source" if "playbook_source" in node else "type"
    plan.editor.insert_after(f"{pointer}/{after}", "allowed_playbooks", allowed)
    plan.note(
        f"{pointer}/allowed_playbooks",
        f"the playbooks it may run written as `allowed_playbooks` ({', '.join(spelled)}: "
        "names the playbook spells; the rest: router-callable)",
    )


def rewrite(plan: Rewrite) -> None:
    """Apply every rewrite to ``plan``'s document, noting each change in ``plan``."""
    document = plan.document
    dropped = [name for name in _DROPPED_TOP_LEVEL if name in document]
    if dropped:
        plan.editor.remove_members("", dropped)
        for name in dropped:
            plan.note(join_pointer(name), f"removed `{name}` (SAIVerse ignored it; SEA has none)")
    _param_types(plan)
    _param_sources(plan)
    for pointer, node in _nodes(document):
        drop: list[str] = []
        _input_template(plan, pointer, node, drop)
        _ignored_next(plan, pointer, node, drop)
        _null_action(plan, pointer, node, drop)
        if drop:
            plan.editor.remove_members(pointer, drop)
        _rename_fields(plan, pointer, node)
        _case_keys(plan, pointer, node)
        if isinstance(node.get("response_schema"), dict):
            _schema_types(plan, f"{pointer}/response_schema", node["response_schema"])
        _executed_playbooks(plan, pointer, node)
        _implicit_arguments(plan, pointer, node)
        _exec_allow_list(plan, pointer, node)

