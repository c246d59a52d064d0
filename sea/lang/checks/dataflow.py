"""Which state variables each node reads and which it defines (for the variable checks).

Each node type declares both (:meth:`~sea.lang.node.NodeModel.reads`,
:meth:`~sea.lang.node.NodeModel.defines`); this module gathers them over a playbook.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sea.lang.checks.context import CheckContext
from sea.lang.checks.nodes import node_pointer
from sea.lang.models import Playbook
from sea.lang.node import Defined, NodeModel, Read, root_of

__all__ = ["Definitions", "Read", "definitions", "node_reads", "root_of"]


@dataclass
class Definitions:
    """Variables some node (or the signature) defines."""

    names: dict[str, str]
    """Variable → what defines it (for messages)."""
    uncertain: list[str]
    """Callees whose outputs are unknown (no library, or not found)."""


def node_reads(index: int, node: NodeModel) -> Iterator[Read]:
    """Every variable the node reads, with where."""
    return node.reads(node_pointer(index))


def definitions(playbook: Playbook, context: CheckContext) -> Definitions:
    """Every variable defined by the signature or by some node."""
    names = {param.name: "input_schema" for param in playbook.input_schema}
    uncertain: list[str] = []
    for node in playbook.nodes:
        for found in node.defines(context.library):
            if isinstance(found, Defined):
                names.setdefault(found.name, found.by)
            else:
                uncertain.append(found.source)
    return Definitions(names, uncertain)
