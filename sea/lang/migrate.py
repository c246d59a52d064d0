"""Rewrite a SAIVerse-format playbook into explicit SEA form (``sea migrate``).

SEA runs SAIVerse playbooks as they are: :mod:`sea.lang.saiverse` states the rules SAIVerse's
runtime applied without the playbook saying so. A migration writes those rules into the
playbook, where SEA's language can say them, so that the file no longer depends on them:

* a callee's implicit arguments (:data:`~sea.lang.saiverse.IMPLICIT_ARGUMENTS`) become
  explicit ``args`` (``"input": "{input}"``) on ``subplay`` nodes whose callee declares the
  parameter and on every ``exec`` node;
* ``"executed_playbooks_init": true`` in a ``set`` node becomes the assignment it stood for,
  ``"executed_playbooks": []``;
* the boolean case keys ``"True"``/``"False"`` become ``"true"``/``"false"`` (unless the value
  compared is declared a string);
* a field SAIVerse silently dropped and whose meaning is plain is renamed to the SEA field
  (:data:`~sea.lang.saiverse.RENAMED_FIELDS`, and the ``did you mean`` mistakes each node
  type declares, e.g. ``tools`` → ``available_tools``);
* a Python type name in a ``response_schema`` or a parameter's type becomes the JSON Schema
  name (``int`` → ``integer``);
* the top-level fields SAIVerse dropped and SEA has no use for (``version``, ``model``,
  ``max_iterations``, ``metadata``) are removed, and so are two legacy fields SAIVerse
  ignored: a parameter's ``source`` (the caller passes the argument) and a ``next`` that
  ``conditional_next`` overrides; a call's legacy ``input_template`` becomes the ``input``
  argument it stood for;
* an ``output_schema`` key nothing defines is removed (SAIVerse copied nothing back for it;
  SEA's own check says so, :data:`~sea.lang.codes.OUTPUT_NEVER_DEFINED`).

The variables SAIVerse's runtime provides and SEA's language has no declaration for stay as
they are (:data:`LEFT_IMPLICIT`); SEA knows them from :mod:`sea.lang.saiverse`.

The file is edited in place (:class:`~sea.lang.jsonedit.JsonTextEditor`): only the changed
spans differ, the author's layout, key order and non-ASCII text stay. Migrating a migrated
file changes nothing.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, get_args

import orjson

from sea.errors import Diagnostic, Severity
from sea.lang import codes, saiverse
from sea.lang.checks.cases import subschema
from sea.lang.checks.context import CheckContext
from sea.lang.hints import KNOWN_MISTAKES, TYPE_NAME_FIXES
from sea.lang.issues import error
from sea.lang.jsonedit import JsonTextEditor, OverlappingEdit
from sea.lang.loader import check_document
from sea.lang.locate import Locator, escape_pointer, join_pointer, unescape_pointer
from sea.lang.models import Playbook
from sea.lang.node import PlaybookIndex
from sea.lang.node_models import ParamType
from sea.lang.vocabulary import BUILTIN_NODE_TYPES, NodeTypes

__all__ = ["LEFT_IMPLICIT", "Change", "Migration", "hinted_renames", "migrate_text"]

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


@dataclass(frozen=True)
class Migration:
    """The outcome of migrating one document."""

    file: str | None
    original: str
    migrated: str | None
    """The rewritten text (equal to ``original`` when nothing needed changing); ``None``
    when the document could not be migrated (see ``diagnostics``)."""
    changes: tuple[Change, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    bom: bool = False
    """The file started with a UTF-8 byte order mark (kept when written back)."""

    @property
    def failed(self) -> bool:
        """The document could not be migrated."""
        return self.migrated is None

    @property
    def changed(self) -> bool:
        """The migration rewrote something."""
        return self.migrated is not None and self.migrated != self.original

    def diff(self) -> str:
        """A unified diff from the original to the migrated text (``""`` if unchanged)."""
        if not self.changed or self.migrated is None:
            return ""
        name = self.file or "<playbook>"
        lines = difflib.unified_diff(
            self.original.splitlines(keepends=True),
            self.migrated.splitlines(keepends=True),
            fromfile=name,
            tofile=name,
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def data(self) -> bytes:
        """The migrated text as the file's bytes (UTF-8, the original's BOM kept)."""
        if self.migrated is None:
            raise ValueError("nothing to write: the document could not be migrated")
        return ("\ufeff" if self.bom else "").encode() + self.migrated.encode("utf-8")


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
class _Plan:
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


def _rename_fields(plan: _Plan, pointer: str, node: dict[str, Any]) -> None:
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


def _case_keys(plan: _Plan, pointer: str, node: dict[str, Any]) -> None:
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


def _schema_types(plan: _Plan, pointer: str, schema: Any) -> None:
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


def _param_types(plan: _Plan) -> None:
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


def _executed_playbooks(plan: _Plan, pointer: str, node: dict[str, Any]) -> None:
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


def _takes(plan: _Plan, node: Mapping[str, Any], name: str) -> bool:
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


def _implicit_arguments(plan: _Plan, pointer: str, node: dict[str, Any]) -> None:
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
    if not added:
        return
    if args is None:
        anchor = next(key for key in (*_ARGS_AFTER, "id") if key in node)
        plan.editor.insert_after(f"{pointer}/{escape_pointer(anchor)}", "args", added)
        return
    for name, value in added.items():
        plan.editor.add_member(f"{pointer}/args", name, value)


def _param_sources(plan: _Plan) -> None:
    """Remove the parameters' `source` (SAIVerse ignored it; the caller passes `args`)."""
    params = plan.document.get("input_schema")
    for position, param in enumerate(params if isinstance(params, list) else ()):
        if isinstance(param, dict) and _PARAM_SOURCE in param:
            where = join_pointer("input_schema", position)
            plan.editor.remove_members(where, [_PARAM_SOURCE])
            plan.note(
                f"{where}/{_PARAM_SOURCE}",
                f"removed `{_PARAM_SOURCE}` (SAIVerse ignored it; the caller passes the "
                "argument in `args`)",
            )


def _input_template(plan: _Plan, pointer: str, node: dict[str, Any], drop: list[str]) -> None:
    """A call's legacy `input_template` becomes the `input` argument it stood for."""
    if node["type"] not in saiverse.IMPLICIT_ARGUMENTS or _INPUT_TEMPLATE not in node:
        return
    template = node[_INPUT_TEMPLATE]
    args = node.get("args")
    where = f"{pointer}/{_INPUT_TEMPLATE}"
    if "args" not in node:
        plan.editor.rename(where, "args")
        plan.editor.replace(where, {"input": template})
        plan.note(where, "`input_template` written as the argument it stood for, `args.input`")
        return
    drop.append(_INPUT_TEMPLATE)
    if isinstance(args, dict) and "input" not in args:
        plan.editor.add_member(f"{pointer}/args", "input", template)
        plan.note(where, "`input_template` written as the argument it stood for, `args.input`")
    else:
        plan.note(where, "removed `input_template` (`args` gives the input)")


def _ignored_next(plan: _Plan, pointer: str, node: dict[str, Any], drop: list[str]) -> None:
    """Remove a `next` that `conditional_next` overrides (SAIVerse and SEA ignore it)."""
    overridden = node["type"] not in saiverse.DYNAMIC_CALL_TYPES or "error_next" not in node
    if "next" in node and isinstance(node.get("conditional_next"), dict) and overridden:
        drop.append("next")
        plan.note(f"{pointer}/next", "removed `next`: `conditional_next` decides where to go")


def _plan(plan: _Plan) -> None:
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
        if drop:
            plan.editor.remove_members(pointer, drop)
        _rename_fields(plan, pointer, node)
        _case_keys(plan, pointer, node)
        if isinstance(node.get("response_schema"), dict):
            _schema_types(plan, f"{pointer}/response_schema", node["response_schema"])
        _executed_playbooks(plan, pointer, node)
        _implicit_arguments(plan, pointer, node)


def _failure(
    file: str | None, text: str, code: str, message: str, pointer: str, hint: str
) -> Diagnostic:
    return error(code, message, pointer, hint=hint).diagnostic(file, Locator(text))


def _not_a_playbook(document: dict[str, Any], text: str, file: str | None) -> Diagnostic | None:
    if isinstance(document.get("nodes"), list):
        return None
    return _failure(
        file,
        text,
        codes.MISSING_FIELD,
        "not a playbook: the document has no `nodes` list",
        "/nodes" if "nodes" in document else "",
        'a playbook looks like {"name": …, "description": …, "start_node": …, "nodes": [...]}',
    )


def _outputs_never_defined(plan: _Plan, positions: set[int]) -> None:
    outputs = plan.document["output_schema"]
    keep = [i for i in range(len(outputs)) if i not in positions]
    plan.editor.replace_items("/output_schema", keep)
    for i in sorted(positions):
        plan.note(
            join_pointer("output_schema", i),
            f"removed `{outputs[i]}` from output_schema: nothing defines it, so callers never "
            "received it",
        )


def _second_pass(plan: _Plan, text: str, context: CheckContext | None) -> None:
    """The rewrite SEA's own checks ask for: output_schema keys nothing defines (SAIVerse
    copied nothing back for them) are removed."""
    never = {
        int(d.pointer.rsplit("/", 1)[1])
        for d in check_document(text, context=context).diagnostics
        if d.code == codes.OUTPUT_NEVER_DEFINED
    }
    if never and isinstance(plan.document.get("output_schema"), list):
        _outputs_never_defined(plan, never)


def _parse(data: bytes | str) -> tuple[str, Any, bool] | None:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
        return text, orjson.loads(text), raw.startswith(b"\xef\xbb\xbf")
    except (UnicodeDecodeError, orjson.JSONDecodeError):
        return None


def _refusal(document: Any, text: str, file: str | None) -> Diagnostic | None:
    """Why a parsed document cannot be migrated (not a playbook, repeated names)."""
    if not isinstance(document, dict):
        return None  # the loader says it (see migrate_text)
    locator = Locator(text)
    repeated = locator.duplicate_keys()
    if repeated:
        pointer, _, again = repeated[0]
        line, column = locator.line_column(again)
        name = unescape_pointer(pointer.rsplit("/", 1)[-1])
        return Diagnostic(
            code=codes.DUPLICATE_KEY,
            severity=Severity.ERROR,
            message=f"member `{name}` is given twice in one object; which one is meant is "
            "unclear, so the file is not migrated",
            file=file,
            pointer=pointer,
            line=line,
            column=column,
            hint="remove one of them, then migrate again",
        )
    return _not_a_playbook(document, text, file)


def _apply(plan: _Plan, file: str | None) -> str | Diagnostic:
    try:
        return plan.editor.result()
    except OverlappingEdit as exc:  # two rules touched one span: leave the file as it is
        return _failure(
            file, plan.editor.text, codes.INVALID_VALUE,
            f"the file could not be migrated ({exc})", "",
            "migrate it by hand; `sea validate` names what SEA does not accept",
        )


def migrate_text(
    data: bytes | str, *, file: str | None = None, context: CheckContext | None = None
) -> Migration:
    """Migrate one document; never raises for bad input.

    Args:
        data: The file's bytes (or text).
        file: The file name shown in diagnostics and in the diff.
        context: The playbooks a ``subplay`` may call (``context.library``: which parameters
            a callee declares, what it returns); without a library, only ``exec`` nodes get
            explicit arguments.
    """
    parsed = _parse(data)
    if parsed is None or not isinstance(parsed[1], dict):
        # the loader locates the problem (invalid UTF-8 or JSON, not an object)
        errors = tuple(check_document(data, file=file).errors)
        return Migration(file, parsed[0] if parsed else "", None, diagnostics=errors)
    text, document, bom = parsed
    refusal = _refusal(document, text, file)
    if refusal is not None:
        return Migration(file, text, None, diagnostics=(refusal,), bom=bom)
    index = context.library if context is not None else None
    first = _Plan(document, JsonTextEditor(text, document), index)
    _plan(first)
    migrated = _apply(first, file)
    if isinstance(migrated, Diagnostic):
        return Migration(file, text, None, diagnostics=(migrated,), bom=bom)
    second = _Plan(orjson.loads(migrated), JsonTextEditor(migrated, orjson.loads(migrated)), index)
    _second_pass(second, migrated, context)
    final = _apply(second, file)
    if isinstance(final, Diagnostic):
        return Migration(file, text, None, diagnostics=(final,), bom=bom)
    return Migration(file, text, final, (*first.changes, *second.changes), bom=bom)
