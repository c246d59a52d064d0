"""Edges out of a node: ``next``, ``conditional_next`` and ``error_next``.

A node that failed and has an ``error_next`` leaves its id in the ``fault`` channel; its
router sends it there. Otherwise ``conditional_next`` (JSON-typed comparison, see
:mod:`sea.lang.conditions`) or ``next`` decides; no target ends the playbook.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.graph import END

from sea.engine.state import PlaybookState, variables
from sea.lang.conditions import choose_target
from sea.lang.models import ExecNode, LLMNode, SubplayNode, ToolCallNode, ToolNode

Router = Callable[[PlaybookState], str]

FALLIBLE_MODELS = (LLMNode, ToolNode, ToolCallNode, SubplayNode, ExecNode)
"""The node models that have ``error_next`` (their types are ``sea.lang.models.FALLIBLE_TYPES``)."""


def error_target(node: Any) -> str | None:
    """The node's ``error_next``; None for a node type that cannot fail."""
    return node.error_next if isinstance(node, FALLIBLE_MODELS) else None


@dataclass(frozen=True, slots=True)
class Edges:
    """How the compiler wires one node: a fixed target, or a router and its targets."""

    static: str | None
    """The one target (END for none) when the node never branches."""
    router: Router | None
    targets: tuple[str, ...]
    """Every target the router can return (for drawing and validation)."""


def _target(node_id: str | None) -> str:
    return END if node_id is None else node_id


def edges_for(node: Any) -> Edges:
    """The edges of one node model."""
    error_next = error_target(node)
    cond = node.conditional_next
    if cond is None and error_next is None:
        return Edges(static=_target(node.next), router=None, targets=())
    targets: set[str] = set()
    if cond is not None:
        targets.update(_target(t) for t in cond.cases.values())
        targets.add(_target(cond.default))
        targets.add(END)
    else:
        targets.add(_target(node.next))
    if error_next is not None:
        targets.add(error_next)
    return Edges(static=None, router=_router(node, error_next), targets=tuple(sorted(targets)))


def _router(node: Any, error_next: str | None) -> Router:
    node_id: str = node.id
    cond = node.conditional_next
    plain_next = _target(node.next)

    def route(state: PlaybookState) -> str:
        if error_next is not None and state.get("fault") == node_id:
            return error_next
        if cond is None:
            return plain_next
        return _target(choose_target(cond, variables(state)))

    route.__name__ = f"route_{node_id}"
    return route


def loop_nodes(nodes: list[Any]) -> frozenset[str]:
    """Ids of the nodes that lie on a cycle (the only ones that can run twice in one run)."""
    successors: dict[str, set[str]] = {}
    for node in nodes:
        edges = edges_for(node)
        targets = {edges.static} if edges.router is None else set(edges.targets)
        successors[node.id] = {t for t in targets if t is not None and t != END}
    looping: set[str] = set()
    for start in successors:
        stack, seen = list(successors[start]), set()
        while stack:
            current = stack.pop()
            if current == start:
                looping.add(start)
                break
            if current in seen or current not in successors:
                continue
            seen.add(current)
            stack.extend(successors[current])
    return frozenset(looping)
