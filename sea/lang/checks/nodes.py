"""Helpers shared by the checks: node pointers."""

from __future__ import annotations

from collections.abc import Iterator

from sea.lang.locate import join_pointer
from sea.lang.models import Playbook
from sea.lang.node import NodeModel


def node_pointer(index: int, *rest: str | int) -> str:
    """Pointer to a node (or a field inside it)."""
    return join_pointer("nodes", index, *rest)


def indexed(playbook: Playbook) -> Iterator[tuple[int, NodeModel]]:
    """Nodes with their index in the document."""
    return enumerate(playbook.nodes)
