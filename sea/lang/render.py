"""Draw a playbook as Mermaid flowchart text (offline, no dependencies).

Each node shows its id and type (and the tool or playbook it calls); plain edges are solid,
``conditional_next`` edges are labelled with their case key (``default`` for the fallback),
and ``error_next`` edges are dashed and labelled ``error``. A null target goes to ``END``.
"""

from __future__ import annotations

from sea.lang.models import (
    FALLIBLE_TYPES,
    ExecNode,
    Node,
    Playbook,
    SubplayNode,
    ToolNode,
)

_SHAPES = {
    "llm": ("(", ")"),
    "tool": ("[/", "/]"),
    "tool_call": ("[/", "/]"),
    "set": ("[", "]"),
    "pass": ("{", "}"),
    "subplay": ("[[", "]]"),
    "exec": ("[[", "]]"),
    "memorize": ("[(", ")]"),
    "speak": (">", "]"),
    "say": (">", "]"),
    "think": (">", "]"),
}
_START = "pb_start"
_END = "pb_end"


def _quote(text: str) -> str:
    return '"' + text.replace('"', "#quot;").replace("\n", " ") + '"'


def _detail(node: Node) -> str | None:
    if isinstance(node, ToolNode):
        return node.action
    if isinstance(node, SubplayNode):
        return node.playbook
    if isinstance(node, ExecNode):
        return f"from {node.playbook_source}"
    return None


def _label(node: Node) -> str:
    detail = _detail(node)
    text = f"{node.id}<br/>{node.type}" + (f": {detail}" if detail else "")
    return _quote(text)


def _edges(node: Node, ref: str, refs: dict[str, str]) -> list[str]:
    def target(node_id: str | None) -> str:
        return _END if node_id is None else refs.get(node_id, _END)

    lines = []
    cond = node.conditional_next
    if cond is not None:
        for key, node_id in cond.cases.items():
            lines.append(f"    {ref} -->|{_quote(key)}| {target(node_id)}")
        if cond.default is not None or "default" not in cond.cases:
            lines.append(f"    {ref} -->|{_quote('default')}| {target(cond.default)}")
    else:
        lines.append(f"    {ref} --> {target(node.next)}")
    error_next: str | None = getattr(node, "error_next", None)
    if node.type in FALLIBLE_TYPES and error_next is not None:
        lines.append(f"    {ref} -. error .-> {target(error_next)}")
    return lines


def to_mermaid(playbook: Playbook) -> str:
    """The playbook as a Mermaid ``flowchart TD`` (ends with a newline)."""
    refs: dict[str, str] = {}
    for index, node in enumerate(playbook.nodes):
        refs.setdefault(node.id, f"n{index}")
    lines = [
        "flowchart TD",
        f"    %% {playbook.name}: {playbook.description}".replace("\n", " "),
        f"    {_START}(((start)))",
        f"    {_END}(((end)))",
    ]
    for index, node in enumerate(playbook.nodes):
        left, right = _SHAPES.get(node.type, ("[", "]"))
        lines.append(f"    n{index}{left}{_label(node)}{right}")
    lines.append(f"    {_START} --> {refs.get(playbook.start_node, _END)}")
    for index, node in enumerate(playbook.nodes):
        lines.extend(_edges(node, f"n{index}", refs))
    return "\n".join(lines) + "\n"
