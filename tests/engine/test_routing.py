"""Edges: next, conditional_next and error_next, and which nodes lie on a cycle."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END
from pydantic import TypeAdapter

from sea.engine.routing import edges_for
from sea.lang.graph import loop_nodes
from sea.lang.node_models import Node
from sea.lang.vocabulary import BUILTIN_NODE_TYPES

NODE: TypeAdapter[Any] = TypeAdapter(Node)


def _node(**data: Any) -> Any:
    return NODE.validate_python(data)


def test_plain_next_and_end() -> None:
    assert edges_for(_node(id="a", type="pass", next="b")).static == "b"
    assert edges_for(_node(id="a", type="pass")).static == END


def test_error_next_wins_only_for_its_own_fault() -> None:
    node = _node(
        id="t",
        type="tool",
        action="x",
        error_next="oops",
        conditional_next={"field": "ok", "cases": {"true": "good"}, "default": "bad"},
    )
    edges = edges_for(node)
    assert edges.router is not None
    assert set(edges.targets) == {"good", "bad", "oops", END}
    assert edges.router({"fault": "t", "vars": {"ok": True}}) == "oops"
    assert edges.router({"fault": "other", "vars": {"ok": True}}) == "good"
    assert edges.router({"fault": None, "vars": {"ok": False}}) == "bad"


def test_loop_nodes_are_the_nodes_on_a_cycle() -> None:
    nodes = [
        _node(id="start", type="set", assignments={"n": 0}, next="inc"),
        _node(id="inc", type="set", assignments={"n": "={n} + 1"}, next="check"),
        _node(
            id="check",
            type="pass",
            conditional_next={"field": "n", "operator": "gte", "cases": {"3": "done"},
                              "default": "inc"},
        ),
        _node(id="done", type="pass"),
        _node(id="self", type="tool", action="x", error_next="self"),
    ]
    assert loop_nodes(nodes) == frozenset({"inc", "check", "self"})


def test_fallible_types_are_the_types_with_error_next() -> None:
    types = BUILTIN_NODE_TYPES
    with_error_next = {name for name, model in types.models.items()
                       if "error_next" in model.model_fields}
    assert with_error_next == types.fallible == {
        "llm", "tool", "tool_call", "actions", "subplay", "exec"
    }


def test_on_error_reads_error_next_of_fallible_nodes_only() -> None:
    assert _node(id="a", type="tool", action="t", error_next="h").on_error == "h"
    assert _node(id="a", type="tool", action="t").on_error is None
    assert _node(id="a", type="pass", next="b").on_error is None
