"""How the compiler wires a node's edges: a fixed target, or a router over its targets.

The edges themselves come from the node's type (:meth:`sea.lang.node.NodeModel.edges`). A node
that failed and has an ``error_next`` leaves its id in the ``fault`` channel; its router sends it
there. Otherwise ``conditional_next`` (JSON-typed comparison, see :mod:`sea.lang.conditions`)
or ``next`` decides; no target ends the playbook. A boolean value also matches SAIVerse's
spelling of its case key, ``"True"``/``"False"`` (:data:`sea.lang.saiverse.BOOLEAN_CASE_KEYS`;
the checks warn about it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from langgraph.graph import END

from sea.engine.state import PlaybookState, variables
from sea.lang import saiverse
from sea.lang.conditions import choose_target
from sea.lang.node import ConditionalNext, NodeModel
from sea.lang.templates import resolve_path

Router = Callable[[PlaybookState], str]


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


def edges_for(node: NodeModel) -> Edges:
    """The edges of one node model."""
    cond = node.conditional_next
    if cond is None and node.on_error is None:
        return Edges(static=_target(node.next), router=None, targets=())
    targets = {_target(edge.target) for edge in node.edges()}
    if cond is not None:
        targets.add(END)  # a case key rendered from state may match nothing
    return Edges(static=None, router=_router(node), targets=tuple(sorted(targets)))


def boolean_cases(cond: ConditionalNext) -> ConditionalNext | None:
    """``cond`` with SAIVerse's boolean keys (``"True"``) in their JSON spelling (``"true"``),
    for a boolean value; None when it has none. A key whose JSON spelling is also written
    stays as it is (the first of the two wins, as written)."""
    if not any(saiverse.boolean_case_key(key) is not None for key in cond.cases):
        return None
    cases: dict[str, str | None] = {}
    for key, target in cond.cases.items():
        cases.setdefault(saiverse.lowercase_case_key(key), target)
    return cond.model_copy(update={"cases": cases})


def _router(node: NodeModel) -> Router:
    node_id = node.id
    error_next = node.on_error
    cond = node.conditional_next
    plain_next = _target(node.next)
    for_boolean = None if cond is None else boolean_cases(cond)

    def route(state: PlaybookState) -> str:
        if error_next is not None and state.get("fault") == node_id:
            return error_next
        if cond is None:
            return plain_next
        scope = variables(state)
        chosen = cond
        if for_boolean is not None and isinstance(resolve_path(scope, cond.field), bool):
            chosen = for_boolean
        return _target(choose_target(chosen, scope))

    route.__name__ = f"route_{node_id}"
    return route
