"""JSON Schema validation of a parsed document: the top level, then each node by its type.

Picking a node's schema by its ``type`` first is what keeps one typo to one diagnostic (a
union of eleven node schemas would report a failure against each of them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from pydantic import ValidationError as ModelError

from sea.jsontypes import json_type
from sea.lang import codes
from sea.lang.hints import suggest
from sea.lang.issues import Issue, error
from sea.lang.locate import escape_pointer, join_pointer
from sea.lang.models import Playbook
from sea.lang.node import NODE_ID_PATTERN, NodeModel
from sea.lang.schema import node_definitions, top_level_schema
from sea.lang.schema_errors import SchemaErrorTranslator
from sea.lang.vocabulary import BUILTIN_NODE_TYPES, NodeTypes

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

UNSUPPORTED_TYPES = {
    "stelis_start": "a Stelis thread",
    "stelis_end": "a Stelis thread",
}
"""SAIVerse node types that are refused, with what they did. A Stelis thread was opened and
closed by two separate nodes, so a failure, a branch or a cancellation between them left the
persona in the sub-thread; a subagent call opens and closes its thread around one call."""
_STELIS_HINT = (
    "move the nodes between `stelis_start` and `stelis_end` into a playbook of their own "
    'and call it with a `subplay` node with `"execution": "subagent"`: it runs in a memory '
    "thread of its own, closed however it ends, and its chronicle comes back as "
    "`_subagent_chronicle` (what `stelis_chronicle` was; `generate_chronicle: false` is "
    "`subagent_chronicle: false`); then remove both stelis nodes"
)
_NODE_ID = re.compile(NODE_ID_PATTERN)
_EDGE_FIELDS = {"next", "conditional_next", "error_next", "id", "type"}


@dataclass(frozen=True)
class _Validators:
    top: Draft202012Validator
    nodes: dict[str, Draft202012Validator]
    definitions: dict[str, Any]
    types: NodeTypes


_VALIDATORS: WeakKeyDictionary[NodeTypes, _Validators] = WeakKeyDictionary()
"""Validators built for a vocabulary, kept as long as the vocabulary lives."""


def _validators(types: NodeTypes) -> _Validators:
    cached = _VALIDATORS.get(types)
    if cached is not None:
        return cached
    from jsonschema import Draft202012Validator  # only a rejected document needs it

    schema = types.schema
    definitions = schema.get("$defs", {})
    nodes = {
        node_type: Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": definitions})
        for node_type, definition in node_definitions(schema).items()
    }
    built = _Validators(
        Draft202012Validator(top_level_schema(schema)), nodes, definitions, types
    )
    _VALIDATORS[types] = built
    return built


@dataclass
class SchemaValidation:
    """Issues found by the schema, and a salvaged document for further checks."""

    issues: list[Issue] = field(default_factory=list)
    salvaged: dict[str, Any] | None = None
    """With issues: the document with bad parts removed or stubbed (``None`` if hopeless)."""
    playbook: Playbook | None = None
    """Without issues: the validated playbook (when the fast path produced it)."""
    partial: bool = False
    """The salvaged document lost nodes, edges or top-level fields: flow checks are unsafe."""
    origin: tuple[int, ...] = ()
    """Index in the document of each node of the salvaged document (nodes may be dropped)."""
    trimmed: frozenset[int] = frozenset()
    """Indexes of the nodes that lost fields (one may have defined a variable or passed an
    argument): findings about them, and about variables read but never defined, are unsafe."""

    def place(self, issue: Issue) -> Issue | None:
        """A static check's issue about the salvaged document, pointed into the document;
        ``None`` when it is about a node that lost fields."""
        if not self.origin or not issue.pointer.startswith("/nodes/"):
            return issue
        head, _, rest = issue.pointer[len("/nodes/") :].partition("/")
        index = self.origin[int(head)]
        if index in self.trimmed:
            return None
        return replace(issue, pointer=f"/nodes/{index}" + (f"/{rest}" if rest else ""))


def _node_type_issue(node: dict[str, Any], index: int, valid: list[str]) -> Issue | None:
    node_id = node.get("id") if isinstance(node.get("id"), str) else None
    kind = node.get("type")
    where = join_pointer("nodes", index)
    if "type" not in node:
        return error(
            codes.MISSING_FIELD,
            "the node has no `type`",
            where,
            node_id=node_id,
            hint="valid types: " + ", ".join(valid),
        )
    if not isinstance(kind, str):
        return error(
            codes.WRONG_TYPE, f"`type` must be a string, not {json_type(kind)}", where + "/type"
        )
    if kind in UNSUPPORTED_TYPES:
        return error(
            codes.UNSUPPORTED_NODE_TYPE,
            f"node type `{kind}` ({UNSUPPORTED_TYPES[kind]}) is not supported: a thread "
            "opened and closed by two separate nodes can be left open by a failure, a branch "
            "or a cancellation between them",
            where + "/type",
            node_id=node_id,
            hint=_STELIS_HINT,
        )
    hint = suggest(kind, valid) + "valid types: " + ", ".join(valid)
    return error(
        codes.UNKNOWN_NODE_TYPE,
        f"unknown node type `{kind}`",
        where + "/type",
        node_id=node_id,
        hint=hint,
    )


def _strictly_valid(model: type[NodeModel], node: dict[str, Any]) -> bool:
    """The node's model accepts it without coercion (then the schema does too)."""
    try:
        model.model_validate(node, strict=True)
    except (ModelError, KeyError):
        return False
    return True


def _node_issues(node: Any, index: int, validators: _Validators) -> list[Issue]:
    if not isinstance(node, dict):
        return [
            error(
                codes.WRONG_TYPE,
                f"a node must be an object, not {json_type(node)}",
                join_pointer("nodes", index),
            )
        ]
    kind = node.get("type")
    validator = validators.nodes.get(kind) if isinstance(kind, str) else None
    if validator is None:
        issue = _node_type_issue(node, index, sorted(validators.nodes))
        return [issue] if issue else []
    if _strictly_valid(validators.types.models[kind], node):  # type: ignore[index]
        return []
    node_id = node.get("id") if isinstance(node.get("id"), str) else None
    translator = SchemaErrorTranslator(
        ("nodes", index), node["type"], validators.definitions, node_id, validators.types
    )
    return translator.translate(validator.iter_errors(node))


def _repair(node: Any, index: int, bad: set[str], validators: _Validators) -> dict[str, Any] | None:
    """The node without its bad fields if that is valid, else a `pass` stub with its edges."""
    if not isinstance(node, dict):
        return None
    node_id = node.get("id")
    if not isinstance(node_id, str) or not _NODE_ID.match(node_id):
        return None
    where = join_pointer("nodes", index)
    bad_fields = {p[len(where) + 1 :].split("/")[0] for p in bad if p.startswith(where + "/")}
    trimmed = {k: v for k, v in node.items() if escape_pointer(k) not in bad_fields}
    kind = node.get("type")
    validator = validators.nodes.get(kind) if isinstance(kind, str) else None
    if validator is not None and validator.is_valid(trimmed):
        return trimmed
    stub: dict[str, Any] = {"id": node_id, "type": "pass"}
    for key in ("next", "conditional_next"):
        if key in node and key not in bad_fields:
            stub[key] = node[key]
    return stub


def _lost_edges(issues: list[Issue]) -> bool:
    """An edge field of a node was dropped, or an unknown field that may be a misspelt one."""
    for issue in issues:
        parts = issue.pointer.split("/")
        if len(parts) > 3 and parts[1] == "nodes":
            if parts[3] in _EDGE_FIELDS or (len(parts) == 4 and issue.code == codes.UNKNOWN_FIELD):
                return True
    return False


def _salvage(
    document: dict[str, Any], issues: list[Issue], validators: _Validators
) -> SchemaValidation:
    """The document with bad parts removed or stubbed, for the checks that stay reliable."""
    nodes = document.get("nodes")
    if not isinstance(nodes, list) or not nodes:
        return SchemaValidation(issues, partial=True)
    bad = {i.pointer for i in issues}
    by_node: dict[int, set[str]] = {}  # each node's bad pointers, grouped once (not per node)
    for pointer in bad:
        parts = pointer.split("/")
        if len(parts) > 2 and parts[1] == "nodes" and parts[2].isdigit():
            by_node.setdefault(int(parts[2]), set()).add(pointer)
    bad_nodes = set(by_node)
    salvaged: list[dict[str, Any]] = []
    origin: list[int] = []
    trimmed: set[int] = set()
    stubbed = False
    for index, node in enumerate(nodes):
        kept = _repair(node, index, by_node[index], validators) if index in bad_nodes else node
        if kept is not None:
            salvaged.append(kept)
            origin.append(index)
            if kept is not node:
                trimmed.add(index)
        stubbed = stubbed or kept is None or (kept is not node and kept.get("type") == "pass")
    if not salvaged:
        return SchemaValidation(issues, partial=True)
    bad_top = {p.split("/")[1] for p in bad if p and not p.startswith("/nodes")}
    result = {k: v for k, v in document.items() if k not in bad_top and k != "nodes"}
    result["nodes"] = salvaged
    result.setdefault("name", "invalid")
    result.setdefault("description", "")
    result.setdefault("start_node", salvaged[0]["id"])
    return SchemaValidation(
        issues,
        result,
        partial=stubbed or bool(bad_top) or _lost_edges(issues),
        origin=tuple(origin),
        trimmed=frozenset(trimmed),
    )


def _fast_path(document: dict[str, Any], types: NodeTypes) -> Playbook | None:
    """The playbook if the models accept the document in strict mode (no coercion).

    The models and the schema are generated from one source and a test checks that what
    the strict models accept, the schema accepts; the JSON Schema validator (slow, pure
    Python) then only runs to explain a rejected document.
    """
    try:
        return types.document.model_validate(document, strict=True)
    except ModelError:
        return None


def schema_validation(
    document: dict[str, Any], types: NodeTypes = BUILTIN_NODE_TYPES
) -> SchemaValidation:
    """Validate a parsed document against the schema of ``types``."""
    fast = _fast_path(document, types)
    if fast is not None:
        return SchemaValidation(playbook=fast)
    validators = _validators(types)
    top = SchemaErrorTranslator((), "playbook", validators.definitions, types=types)
    issues = top.translate(validators.top.iter_errors(document))
    nodes = document.get("nodes")
    if isinstance(nodes, list):
        for index, node in enumerate(nodes):
            issues.extend(_node_issues(node, index, validators))
    if not issues:
        return SchemaValidation()
    return _salvage(document, issues, validators)
