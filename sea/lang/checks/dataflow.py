"""Which state variables each node reads and which it defines (for the variable checks)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sea.lang.checks.context import CheckContext
from sea.lang.checks.nodes import indexed, node_pointer
from sea.lang.expressions import ExpressionSyntaxError, compile_expression
from sea.lang.locate import escape_pointer
from sea.lang.models import (
    ExecNode,
    LLMNode,
    MemorizeNode,
    Node,
    Playbook,
    SayNode,
    SetNode,
    SpeakNode,
    SubplayNode,
    ThinkNode,
    ToolCallNode,
    ToolNode,
)
from sea.lang.templates import references


@dataclass(frozen=True)
class Read:
    """One read of a state variable."""

    root: str
    pointer: str
    node_id: str
    char_offset: int | None = None
    prompt: bool = False
    """Inside prompt text, where a brace may be literal (a warning, not an error)."""
    path: str = ""


@dataclass
class Definitions:
    """Variables some node (or the signature) defines."""

    names: dict[str, str]
    """Variable → what defines it (for messages)."""
    uncertain: list[str]
    """Callees whose outputs are unknown (no library, or not found)."""


def root_of(path: str) -> str:
    """First segment of a dotted path."""
    return path.split(".", 1)[0]


def _template_reads(text: str, pointer: str, node_id: str, prompt: bool = False) -> Iterator[Read]:
    for ref in references(text):
        yield Read(ref.root, pointer, node_id, ref.start, prompt, ref.path)


def _nested_reads(value: Any, pointer: str, node_id: str) -> Iterator[Read]:
    if isinstance(value, str):
        yield from _template_reads(value, pointer, node_id)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _nested_reads(item, f"{pointer}/{escape_pointer(key)}", node_id)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _nested_reads(item, f"{pointer}/{i}", node_id)


def _key_read(path: str | None, pointer: str, node_id: str) -> Iterator[Read]:
    if path:
        yield Read(root_of(path), pointer, node_id, None, False, path)


def _set_reads(node: SetNode, base: str) -> Iterator[Read]:
    for key, value in node.assignments.items():
        pointer = f"{base}/assignments/{escape_pointer(key)}"
        if isinstance(value, str) and value.startswith("="):
            try:
                expression = compile_expression(value[1:])
            except ExpressionSyntaxError:
                continue
            for name in sorted(expression.variables):
                found = value.find("{" + name)
                yield Read(name, pointer, node.id, found if found >= 0 else None, False, name)
        else:
            yield from _nested_reads(value, pointer, node.id)


def _type_reads(node: Node, base: str) -> Iterator[Read]:
    if isinstance(node, (LLMNode, MemorizeNode)) and node.action:
        yield from _template_reads(node.action, f"{base}/action", node.id, prompt=True)
    elif isinstance(node, (SpeakNode, SayNode, ThinkNode)) and node.action:
        yield from _template_reads(node.action, f"{base}/action", node.id)
    if isinstance(node, (LLMNode, MemorizeNode, SayNode)):
        yield from _key_read(node.metadata_key, f"{base}/metadata_key", node.id)
    if isinstance(node, ToolNode):
        yield from _nested_reads(node.args, f"{base}/args", node.id)
        for key, value in (node.args_input or {}).items():
            if isinstance(value, str):
                yield from _key_read(value, f"{base}/args_input/{escape_pointer(key)}", node.id)
    elif isinstance(node, ToolCallNode):
        yield from _key_read(node.call_source, f"{base}/call_source", node.id)
    elif isinstance(node, SetNode):
        yield from _set_reads(node, base)
    elif isinstance(node, (SubplayNode, ExecNode)):
        yield from _nested_reads(node.args, f"{base}/args", node.id)
        if isinstance(node, ExecNode):
            yield from _key_read(node.playbook_source, f"{base}/playbook_source", node.id)


def node_reads(index: int, node: Node) -> Iterator[Read]:
    """Every variable the node reads, with where."""
    base = node_pointer(index)
    yield from _type_reads(node, base)
    cond = node.conditional_next
    if cond is not None:
        yield from _key_read(cond.field, f"{base}/conditional_next/field", node.id)
        for key in cond.cases:
            pointer = f"{base}/conditional_next/cases/{escape_pointer(key)}"
            for ref in references(key):
                yield Read(ref.root, pointer, node.id, None, False, ref.path)


def _callee_outputs(node: SubplayNode | ExecNode, context: CheckContext) -> list[str] | None:
    library = context.library
    if library is None:
        return None
    if isinstance(node, SubplayNode):
        signature = library.signature(node.playbook)
        return list(signature.outputs) if signature is not None else None
    names = node.allowed_playbooks
    outputs: list[str] = []
    for name in names if names is not None else library.names():
        signature = library.signature(name)
        if signature is not None and (names is not None or signature.router_callable):
            outputs.extend(signature.outputs)
    return outputs


def _llm_definitions(node: LLMNode) -> Iterator[str]:
    if node.output_key:
        yield node.output_key
    yield from (node.output_mapping or {}).values()
    for entry in node.output_keys or []:
        yield from entry.values()


def _node_definitions(node: Node, context: CheckContext) -> Iterator[tuple[str, str] | None]:
    what = f"node `{node.id}`"
    keys: list[str] = []
    if isinstance(node, LLMNode):
        keys = list(_llm_definitions(node))
    elif isinstance(node, ToolNode):
        keys = [k for k in [node.output_key, *(node.output_keys or [])] if k]
    elif isinstance(node, ToolCallNode):
        keys = [node.output_key] if node.output_key else []
    elif isinstance(node, SetNode):
        keys = list(node.assignments)
    elif isinstance(node, (SubplayNode, ExecNode)):
        outputs = _callee_outputs(node, context)
        if outputs is None:
            yield None
        for name in outputs or []:
            yield root_of(name), f"the output_schema of the playbook called by {what}"
    for key in keys:
        yield root_of(key), what


def definitions(playbook: Playbook, context: CheckContext) -> Definitions:
    """Every variable defined by the signature or by some node."""
    names = {param.name: "input_schema" for param in playbook.input_schema}
    uncertain: list[str] = []
    for _, node in indexed(playbook):
        for found in _node_definitions(node, context):
            if found is None:
                callee = node.playbook if isinstance(node, SubplayNode) else "chosen at run time"
                uncertain.append(f"node `{node.id}` (playbook {callee})")
            else:
                names.setdefault(found[0], found[1])
    return Definitions(names, uncertain)
