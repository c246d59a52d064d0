"""Graph checks: ids, start node, edge targets, reachability, loops that cannot end (the graph
itself comes from :mod:`sea.lang.graph`)."""

from __future__ import annotations

from collections.abc import Sequence

from sea.lang import codes
from sea.lang.checks.context import CheckContext
from sea.lang.checks.nodes import indexed, node_pointer
from sea.lang.graph import Graph, cycles, reachable, successors
from sea.lang.hints import Suggester
from sea.lang.issues import Issue, error, warning
from sea.lang.locate import join_pointer
from sea.lang.models import Playbook

_EDGE_CODES = {
    "next": codes.UNKNOWN_NEXT,
    "error_next": codes.UNKNOWN_ERROR_NEXT,
}


_SHOWN_IDS = 30
"""Node ids a hint lists at most (a hint's length must not grow with the playbook)."""


def _target_hint(target: str, ids: Sequence[str], hints: Suggester) -> str:
    shown = ", ".join(f"`{i}`" for i in ids[:_SHOWN_IDS])
    if len(ids) > _SHOWN_IDS:
        shown += f" and {len(ids) - _SHOWN_IDS} more"
    return hints.suggest(target) + f"node ids: {shown}"


def _duplicates(playbook: Playbook) -> list[Issue]:
    first: dict[str, int] = {}
    issues = []
    for index, node in indexed(playbook):
        if node.id in first:
            issues.append(
                error(
                    codes.DUPLICATE_ID,
                    f"node id `{node.id}` is already used by node {first[node.id]}",
                    node_pointer(index, "id"),
                    node_id=node.id,
                    hint="give every node a unique id",
                )
            )
        else:
            first[node.id] = index
    seen: set[str] = set()
    for index, param in enumerate(playbook.input_schema):
        if param.name in seen:
            issues.append(
                error(
                    codes.DUPLICATE_PARAM,
                    f"input parameter `{param.name}` is declared twice",
                    join_pointer("input_schema", index, "name"),
                )
            )
        seen.add(param.name)
    return issues


def check_ids_and_targets(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """Duplicate ids and parameters, a missing start node, edges to nodes that do not exist,
    and ``next`` beside ``conditional_next`` (ignored)."""
    ids = list(dict.fromkeys(node.id for node in playbook.nodes))
    known = set(ids)
    hints = Suggester(ids)
    issues = _duplicates(playbook)
    if playbook.start_node not in known:
        issues.append(
            error(
                codes.MISSING_START,
                f"start_node `{playbook.start_node}` names no node",
                "/start_node",
                hint=_target_hint(playbook.start_node, ids, hints),
            )
        )
    for index, node in indexed(playbook):
        for edge in node.edges():
            if edge.target is None or edge.target in known:
                continue
            field = edge.field.split("/", 1)[0]
            issues.append(
                error(
                    _EDGE_CODES.get(field, codes.UNKNOWN_CASE_TARGET),
                    f"{field} of node `{node.id}` goes to `{edge.target}`, which is not a node",
                    node_pointer(index) + "/" + edge.field,
                    node_id=node.id,
                    hint=_target_hint(edge.target, ids, hints),
                )
            )
        if node.conditional_next is not None and node.next is not None:
            issues.append(
                warning(
                    codes.NEXT_IGNORED,
                    f"node `{node.id}` has both `next` and `conditional_next`; `next` is ignored",
                    node_pointer(index, "next"),
                    node_id=node.id,
                    hint="remove `next`, or use it as the `default` of `conditional_next`",
                )
            )
    return issues


def _unbounded_loops(playbook: Playbook, graph: Graph) -> list[Issue]:
    positions = {node.id: i for i, node in reversed(list(indexed(playbook)))}
    issues = []
    for component in cycles(graph):
        members = set(component)
        leaves = any(
            (edge.target is None or edge.target not in members) and not edge.on_error
            for member in component
            for edge in graph[member]
        )
        if leaves:
            continue
        first = min(component, key=lambda m: positions[m])
        loop = " → ".join(sorted(component, key=lambda m: positions[m]))
        issues.append(
            error(
                codes.UNBOUNDED_LOOP,
                f"the loop {loop} has no branch that leaves it, so it can never end",
                node_pointer(positions[first]),
                node_id=first,
                hint="count the rounds (a `set` node with `={count} + 1`) and leave the loop "
                "with a `conditional_next` (operator `gte`) when the count reaches a limit",
            )
        )
    return issues


def _meant_targets(graph: Graph) -> set[str]:
    """Nodes a misspelt edge target probably meant (not reported as unreachable too)."""
    hints = Suggester(graph)
    return {
        close
        for edges_ in graph.values()
        for edge in edges_
        if edge.target is not None and edge.target not in graph
        for close in [hints.close(edge.target)]
        if close is not None
    }


def check_flow(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """Nodes unreachable from the start (error_next counts) and loops that cannot end."""
    graph = successors(playbook.nodes)
    seen = reachable(graph, [playbook.start_node]) if playbook.start_node in graph else None
    issues: list[Issue] = []
    if seen is not None:
        meant = _meant_targets(graph)
        for index, node in indexed(playbook):
            if node.id not in seen and node.id not in meant:
                issues.append(
                    error(
                        codes.UNREACHABLE,
                        f"node `{node.id}` cannot be reached from start_node "
                        f"`{playbook.start_node}`",
                        node_pointer(index),
                        node_id=node.id,
                        hint="connect it with `next`, a case of `conditional_next` or "
                        "`error_next`, or remove it",
                    )
                )
    return issues + _unbounded_loops(playbook, graph)
