"""A playbook as a graph: edges, reachability, loops and failure routes, computed once here
for the static checks, the compiler and ``sea graph``.

Edges come from the node types themselves (:meth:`sea.lang.node.NodeModel.edges`); a ``None``
target ends the playbook.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sea.lang.node import Edge, NodeModel

Graph = dict[str, list[Edge]]
"""Node id → its outgoing edges."""


def successors(nodes: Sequence[NodeModel]) -> Graph:
    """Every node's edges; when two nodes share an id, the first one wins."""
    graph: Graph = {}
    for node in nodes:
        graph.setdefault(node.id, list(node.edges()))
    return graph


def targets(graph: Graph, node_id: str) -> list[str]:
    """The nodes an edge of ``node_id`` goes to (edges that end the playbook or go to no node
    are left out)."""
    return [e.target for e in graph[node_id] if e.target is not None and e.target in graph]


def reachable(graph: Graph, roots: Iterable[str]) -> set[str]:
    """Ids reachable from ``roots`` (inclusive), following every edge."""
    seen: set[str] = set()
    stack = [r for r in roots if r in graph]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        stack.extend(targets(graph, current))
    return seen


def failure_targets(nodes: Sequence[NodeModel]) -> list[str]:
    """Where failures are routed (every ``error_next``), in document order."""
    return [node.on_error for node in nodes if node.on_error is not None]


def components(graph: Graph) -> list[list[str]]:
    """Strongly connected components (iterative Tarjan), each in discovery order."""
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
            out = targets(graph, node)
            if i < len(out):
                work.append((node, i + 1))
                target = out[i]
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


def cycles(graph: Graph) -> list[list[str]]:
    """The components that hold a cycle (more than one node, or a node that goes to itself)."""
    return [
        component
        for component in components(graph)
        if len(component) > 1 or component[0] in targets(graph, component[0])
    ]


def loop_nodes(nodes: Sequence[NodeModel]) -> frozenset[str]:
    """Ids of the nodes that lie on a cycle (the only ones that can run twice in one run)."""
    return frozenset(member for cycle in cycles(successors(nodes)) for member in cycle)
