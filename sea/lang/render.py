"""Draw a playbook as Mermaid flowchart text (offline, no dependencies).

Each node shows its id and type (and what its type's ``detail()`` adds, e.g. the tool or
playbook it calls) in its type's ``mermaid_shape``. Edges come from the node types; plain
edges are solid, ``conditional_next`` edges are labelled with their case key (``default`` for
the fallback), and ``error_next`` edges are dashed and labelled ``error``. A null target goes
to ``END``.
"""

from __future__ import annotations

from sea.lang.models import Playbook
from sea.lang.node import NodeModel

_START = "pb_start"
_END = "pb_end"


def _quote(text: str) -> str:
    return '"' + text.replace('"', "#quot;").replace("\n", " ") + '"'


def _label(node: NodeModel) -> str:
    detail = node.detail()
    text = f"{node.id}<br/>{node.node_type()}" + (f": {detail}" if detail else "")
    return _quote(text)


def _edges(node: NodeModel, ref: str, refs: dict[str, str]) -> list[str]:
    def target(node_id: str | None) -> str:
        return _END if node_id is None else refs.get(node_id, _END)

    lines = []
    for edge in node.edges():
        if edge.on_error:
            lines.append(f"    {ref} -. error .-> {target(edge.target)}")
        elif edge.label is None:
            lines.append(f"    {ref} --> {target(edge.target)}")
        else:
            lines.append(f"    {ref} -->|{_quote(edge.label)}| {target(edge.target)}")
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
        left, right = node.mermaid_shape
        lines.append(f"    n{index}{left}{_label(node)}{right}")
    lines.append(f"    {_START} --> {refs.get(playbook.start_node, _END)}")
    for index, node in enumerate(playbook.nodes):
        lines.extend(_edges(node, f"n{index}", refs))
    return "\n".join(lines) + "\n"
