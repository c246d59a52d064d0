"""Completion and hover: what may be written at a position, and what a name there means.

Every answer comes from the language's own tables: the node types and their fields (with the
descriptions the published JSON Schema carries), the document's node ids and variables
(:mod:`sea.lsp.analysis`), the library's playbooks and the host's tools.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lsprotocol import types as lsp
from pydantic import BaseModel

from sea.lang.locate import unescape_pointer
from sea.lsp.analysis import EDGE_FIELDS, Analysis, raw_nodes
from sea.lsp.scan import Cursor
from sea.lsp.workspace import Workspace

_NODE = re.compile(r"^/nodes/(\d+)(?:/(.*))?$")
_OPEN_TEMPLATE = re.compile(r"\{([A-Za-z0-9_.]*)$")
_EXPRESSION_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)?$")
PLAYBOOK_FIELDS = ("playbook", "allowed_playbooks")
TOOL_FIELDS = ("available_tools", "tool")
"""The fields that name tools on any node type; a ``tool`` node's ``action`` does too."""


def names_tool(kind: str | None, field: str | None) -> bool:
    """Whether a node's field names a tool (``action`` only on a ``tool`` node: elsewhere it
    is the text to say or the prompt)."""
    return field in TOOL_FIELDS or (field == "action" and kind == "tool")
BRANCH_FIELDS = {
    "field": "The state variable (a dotted path) whose value chooses the case.",
    "operator": "How the value is compared with each case key (default `equals`).",
    "cases": "Case key → the id of the node to run (null ends the playbook).",
    "default": "The node to run when no case matches (null or absent ends the playbook).",
}


def split(pointer: str) -> list[str]:
    """A pointer's segments, unescaped."""
    return [unescape_pointer(s) for s in pointer.split("/")[1:]] if pointer else []


def field_docs(model: type[BaseModel]) -> dict[str, str]:
    """A model's fields as written in JSON → their descriptions."""
    return {(info.alias or name): info.description or ""
            for name, info in model.model_fields.items() if name != "schema_"}


def node_type_at(workspace: Workspace, raw: Any, index: int, scanned: dict[str, str]) -> str | None:
    """The type of the node at ``index``: from the text as scanned, else the last parse."""
    kind = scanned.get(f"/nodes/{index}/type")
    if kind is None:
        kind = next((r.type for r in raw_nodes(raw) if r.index == index), None)
    return kind if kind in workspace.types else None


def _item(label: str, kind: lsp.CompletionItemKind, doc: str = "", detail: str = "",
          sort: str = "1") -> lsp.CompletionItem:
    return lsp.CompletionItem(
        label=label, kind=kind, detail=detail or None, sort_text=f"{sort}{label}",
        documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, doc) if doc else None)


def tool_schemas(workspace: Workspace) -> Mapping[str, Mapping[str, Any] | None]:
    """The tools known: the host's (``--tools``, ``--mcp``), else the engine's own."""
    if workspace.tools is not None:
        return workspace.tools.tools
    from sea.jsonfile import read_json
    from sea.resources import ENGINE_TOOLS_FILE, schemas_dir

    tools: dict[str, Mapping[str, Any] | None] = read_json(
        schemas_dir() / ENGINE_TOOLS_FILE, "catalogue of the engine's tools")
    return tools


def tool_doc(name: str, schema: Mapping[str, Any] | None) -> str:
    """A tool's description and arguments, as Markdown."""
    if schema is None:
        return f"**tool** `{name}` (its arguments are not known)"
    lines = [f"**tool** `{name}`", str(schema.get("description", ""))]
    required = set(schema.get("required", ()))
    for arg, spec in (schema.get("properties") or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        mark = "" if arg in required else " (optional)"
        lines.append(f"- `{arg}`{mark}: {spec.get('type', 'any')} {spec.get('description', '')}")
    return "\n".join(line for line in lines if line)


def playbook_doc(workspace: Workspace, name: str) -> str:
    """A playbook's description and parameters, as Markdown."""
    signature = workspace.index.signature(name)
    if signature is None:
        return f"no playbook named `{name}`"
    document = workspace.open_playbook(name)
    raw = document.raw if document is not None else _file_json(workspace, name)
    description = raw.get("description", "") if isinstance(raw, dict) else ""
    lines = [f"**playbook** `{name}`", str(description)]
    lines += [f"- `{p}`{'' if required else ' (optional)'}"
              for p, required in signature.params.items()]
    if signature.outputs:
        lines.append("returns: " + ", ".join(f"`{o}`" for o in signature.outputs))
    return "\n".join(line for line in lines if line)


def _file_json(workspace: Workspace, name: str) -> Any:
    import orjson

    from sea.lang.files import read_playbook_bytes

    try:
        return orjson.loads(read_playbook_bytes(workspace.library.path(name)))
    except (OSError, ValueError, LookupError):  # a hover shows what can be read
        return None


def _variables(analysis: Analysis, node_id: str | None) -> list[lsp.CompletionItem]:
    return [_item(name, lsp.CompletionItemKind.Variable,
                  detail="defined before this node" if before else "defined by a later node",
                  sort="1" if before else "2")
            for name, before in analysis.variables_for(node_id)]


def _key_docs(workspace: Workspace, analysis: Analysis, pointer: str, index: int | None,
              kind: str | None, node_id: str | None) -> Mapping[str, str]:
    """The member names an object at ``pointer`` may have, with their documentation."""
    segments = split(pointer)
    field = segments[2] if len(segments) > 2 and segments[0] == "nodes" else None
    if pointer == "":
        return field_docs(workspace.types.document)
    if index is not None and len(segments) == 2:
        return field_docs(workspace.types.models[kind]) if kind else {"type": "Node type."}
    if field == "conditional_next" and len(segments) == 3:
        return BRANCH_FIELDS
    if field == "args" and len(segments) == 3 and kind == "subplay" and node_id and \
            isinstance(analysis.raw, dict) and index is not None:
        callee = analysis.raw["nodes"][index].get("playbook")
        signature = workspace.index.signature(callee) if isinstance(callee, str) else None
        return {p: "required" if r else "optional"
                for p, r in (signature.params.items() if signature else ())}
    return {}


def complete(workspace: Workspace, analysis: Analysis, cursor: Cursor,
             scanned: dict[str, str]) -> list[lsp.CompletionItem]:
    """What may be written at ``cursor`` (see the module's docstring).

    Args:
        workspace: The open documents, library and tools.
        analysis: The document's last analysis (of its last text that parsed).
        cursor: Where the position is, from the text as typed.
        scanned: The string values of the text as typed, by pointer (the nodes' types).
    """
    segments = split(cursor.pointer)
    raw = analysis.raw
    match = _NODE.match(cursor.pointer)
    index = int(match.group(1)) if match else None
    kind = node_type_at(workspace, raw, index, scanned) if index is not None else None
    node_id = next((r.id for r in raw_nodes(raw) if r.index == index), None)
    field = segments[2] if len(segments) > 2 and segments[0] == "nodes" else None
    if cursor.where == "key":
        docs = _key_docs(workspace, analysis, cursor.pointer, index, kind, node_id)
        return [_item(name, lsp.CompletionItemKind.Field, doc) for name, doc in docs.items()]
    if cursor.where != "value":
        return []
    last = segments[-1] if segments else ""
    if cursor.in_string:
        opened = _OPEN_TEMPLATE.search(cursor.prefix)
        if opened is not None or cursor.prefix.startswith("="):
            return _variables(analysis, node_id)
    if index is not None and last == "type" and len(segments) == 3:
        return [_item(name, lsp.CompletionItemKind.Class, model.__doc__ or "")
                for name, model in workspace.types.models.items()]
    if segments == ["start_node"] or (field in EDGE_FIELDS and len(segments) == 3) or (
            field == "conditional_next" and len(segments) >= 4
            and (segments[3] == "default" or (segments[3] == "cases" and len(segments) == 5))):
        return [_item(ref.id, lsp.CompletionItemKind.Reference, detail=ref.type or "")
                for ref in raw_nodes(raw)]
    if field == "conditional_next" and segments[3:] == ["field"]:
        return _variables(analysis, node_id)
    if field in PLAYBOOK_FIELDS and kind in ("subplay", "exec"):
        return [_item(name, lsp.CompletionItemKind.Module, playbook_doc(workspace, name))
                for name in workspace.index.names()]
    if names_tool(kind, field):
        return [_item(name, lsp.CompletionItemKind.Function, tool_doc(name, schema))
                for name, schema in tool_schemas(workspace).items()]
    return []


def hover_text(workspace: Workspace, analysis: Analysis, pointer: str, is_key: bool,
               word: str | None) -> str | None:
    """The Markdown shown for the member name or value at ``pointer``.

    Args:
        workspace: The open documents, library and tools.
        analysis: The document's analysis.
        pointer: The member or value under the mouse.
        is_key: Whether it is the member's name.
        word: The variable name under the mouse inside a template, if any.
    """
    segments = split(pointer)
    raw = analysis.raw
    match = _NODE.match(pointer)
    index = int(match.group(1)) if match else None
    kind = node_type_at(workspace, raw, index, {}) if index is not None else None
    field = segments[2] if len(segments) > 2 and segments[0] == "nodes" else None
    if word is not None and (word in analysis.defined or word in analysis.reads):
        return variable_doc(analysis, word)
    if is_key:
        if len(segments) == 1:
            return field_docs(workspace.types.document).get(segments[0])
        if index is not None and len(segments) == 3 and kind:
            return field_docs(workspace.types.models[kind]).get(segments[2])
        return BRANCH_FIELDS.get(segments[-1]) if field == "conditional_next" else None
    value = value_at(raw, segments)
    if not isinstance(value, str):
        return None
    if field in PLAYBOOK_FIELDS and kind in ("subplay", "exec"):
        return playbook_doc(workspace, value)
    if names_tool(kind, field):
        tools = tool_schemas(workspace)
        return tool_doc(value, tools[value]) if value in tools else f"unknown tool `{value}`"
    if field == "type" and len(segments) == 3 and value in workspace.types:
        return f"**{value}** node: {workspace.types.models[value].__doc__ or ''}"
    if value in analysis.defined and field in ("output_key", "field"):
        return variable_doc(analysis, value)
    return None


def value_at(raw: Any, segments: list[str]) -> Any:
    """What ``segments`` (a JSON pointer's, split) name in the parsed document ``raw``, or
    None when the path leads nowhere."""
    for segment in segments:
        if isinstance(raw, dict):
            raw = raw.get(segment)
        elif isinstance(raw, list) and segment.isdigit() and int(segment) < len(raw):
            raw = raw[int(segment)]
        else:
            return None
    return raw


def variable_doc(analysis: Analysis, name: str) -> str:
    """A variable's type (when a parameter declares it) and the nodes that define and read
    it, as Markdown."""
    ids = {ref.index: ref.id for ref in raw_nodes(analysis.raw)}
    lines = [f"**variable** `{name}`"]
    if analysis.playbook is not None:
        for param in analysis.playbook.input_schema:
            if param.name == name:
                lines.append(f"parameter of type `{getattr(param, 'type', 'any')}`: "
                             f"{getattr(param, 'description', '') or ''}")
    defined = [("input_schema" if i == -1 else f"`{ids.get(i, i)}`")
               for i in analysis.defined.get(name, [])]
    lines.append("defined by: " + (", ".join(defined) or "nothing"))
    readers = sorted({f"`{r.node_id}`" for r in analysis.reads.get(name, [])})
    lines.append("read by: " + (", ".join(readers) or "nothing"))
    return "\n\n".join(lines)
