"""Helpers shared by the checks: node pointers and edges."""

from __future__ import annotations

from collections.abc import Iterator

from sea.lang.locate import join_pointer
from sea.lang.models import FALLIBLE_TYPES, Node, Playbook


def node_pointer(index: int, *rest: str | int) -> str:
    """Pointer to a node (or a field inside it)."""
    return join_pointer("nodes", index, *rest)


def indexed(playbook: Playbook) -> Iterator[tuple[int, Node]]:
    """Nodes with their index in the document."""
    return enumerate(playbook.nodes)


def edges(node: Node) -> Iterator[tuple[str | None, str]]:
    """(target, field pointer suffix) of every outgoing edge; ``None`` target = END.

    ``next`` counts only without ``conditional_next``; an absent default ends the playbook.
    """
    cond = node.conditional_next
    if cond is not None:
        for key, target in cond.cases.items():
            yield target, f"conditional_next/cases/{key.replace('~', '~0').replace('/', '~1')}"
        if cond.default is not None or "default" not in cond.cases:
            yield cond.default, "conditional_next/default"
    else:
        yield node.next, "next"
    if node.type in FALLIBLE_TYPES:
        error_next: str | None = getattr(node, "error_next", None)
        if error_next is not None:
            yield error_next, "error_next"
