"""Graph checks: ids, start node, edge targets, reachability, loops that cannot end."""

from __future__ import annotations

from collections.abc import Iterable

from sea.lang import codes
from sea.lang.checks.context import CheckContext
from sea.lang.checks.nodes import edges, indexed, node_pointer
from sea.lang.hints import did_you_mean, suggest
from sea.lang.issues import Issue, error, warning
from sea.lang.locate import join_pointer
from sea.lang.models import Playbook

Graph = dict[str, list[tuple[str | None, str]]]

_EDGE_CODES = {
    "next": codes.UNKNOWN_NEXT,
    "error_next": codes.UNKNOWN_ERROR_NEXT,
}


def _target_hint(target: str, ids: Iterable[str]) -> str:
    shown = ", ".join(f"`{i}`" for i in ids)
    return suggest(target, ids) + f"node ids: {shown}"


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
    issues = _duplicates(playbook)
    if playbook.start_node not in known:
        issues.append(
            error(
                codes.MISSING_START,
                f"start_node `{playbook.start_node}` names no node",
                "/start_node",
                hint=_target_hint(playbook.start_node, ids),
            )
        )
    for index, node in indexed(playbook):
        for target, where in edges(node):
            if target is None or target in known:
                continue
            field = where.split("/", 1)[0]
            issues.append(
                error(
                    _EDGE_CODES.get(field, codes.UNKNOWN_CASE_TARGET),
                    f"{field} of node `{node.id}` goes to `{target}`, which is not a node",
                    node_pointer(index) + "/" + where,
                    node_id=node.id,
                    hint=_target_hint(target, ids),
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


def successors(playbook: Playbook) -> dict[str, list[tuple[str | None, str]]]:
    """Node id → its edges (target, field); the first node with an id wins."""
    result: dict[str, list[tuple[str | None, str]]] = {}
    for node in playbook.nodes:
        result.setdefault(node.id, list(edges(node)))
    return result


def reachable(graph: dict[str, list[tuple[str | None, str]]], roots: Iterable[str]) -> set[str]:
    """Ids reachable from ``roots`` (inclusive), following every edge."""
    seen: set[str] = set()
    stack = [r for r in roots if r in graph]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        stack.extend(t for t, _ in graph[current] if t is not None and t in graph)
    return seen


def _components(graph: dict[str, list[tuple[str | None, str]]]) -> list[list[str]]:
    """Strongly connected components (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = [t for t, _ in graph[node] if t is not None and t in graph]
            if i < len(targets):
                work.append((node, i + 1))
                target = targets[i]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                result.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return result


def _unbounded_loops(
    playbook: Playbook, graph: dict[str, list[tuple[str | None, str]]]
) -> list[Issue]:
    positions = {node.id: i for i, node in reversed(list(indexed(playbook)))}
    issues = []
    for component in _components(graph):
        members = set(component)
        cyclic = len(component) > 1 or any(t == component[0] for t, _ in graph[component[0]])
        if not cyclic:
            continue
        leaves = any(
            (target is None or target not in members) and not field.startswith("error_next")
            for member in component
            for target, field in graph[member]
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
    ids = list(graph)
    return {
        close
        for edges_ in graph.values()
        for target, _ in edges_
        if target is not None and target not in graph
        for close in [did_you_mean(target, ids)]
        if close is not None
    }


def check_flow(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """Nodes unreachable from the start (error_next counts) and loops that cannot end."""
    graph = successors(playbook)
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
