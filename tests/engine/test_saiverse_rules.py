"""SAIVerse's implicit rules in the engine's own pieces: routing, state, set, arguments."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.graph import END
from pydantic import TypeAdapter

from sea.engine.calls import bind_args
from sea.engine.routing import edges_for
from sea.engine.state import variables
from sea.errors import CallArgumentError
from sea.lang.models import Playbook
from sea.lang.node_models import Node, SetNode
from sea.nodes.set import KIND as SET

NODE: TypeAdapter[Any] = TypeAdapter(Node)


def _router(cases: dict[str, str | None]) -> Any:
    node = NODE.validate_python({
        "id": "r", "type": "pass",
        "conditional_next": {"field": "flag", "cases": cases, "default": "other"},
    })
    router = edges_for(node).router
    assert router is not None
    return router


def test_python_boolean_keys_match_booleans_only() -> None:
    route = _router({"True": "yes", "False": "no"})
    assert route({"vars": {"flag": True}}) == "yes"
    assert route({"vars": {"flag": False}}) == "no"
    assert route({"vars": {"flag": "True"}}) == "yes"  # a string still matches its own text
    assert route({"vars": {"flag": "true"}}) == "other"
    assert route({"vars": {}}) == "other"


def test_the_json_key_written_first_wins_over_the_python_one() -> None:
    route = _router({"true": "json", "True": "python", "False": None})
    assert route({"vars": {"flag": True}}) == "json"
    assert route({"vars": {"flag": False}}) == END


def test_metadata_reads_as_an_empty_object_unless_given() -> None:
    assert variables({"vars": {}})["metadata"] == {}
    assert variables({"vars": {"metadata": {"a": 1}}})["metadata"] == {"a": 1}
    scope = variables({"vars": {"x": 1}})
    assert dict(scope.maps[-1]) == {"x": 1}  # the defaults are not the run's own variables


def test_set_creates_executed_playbooks_once() -> None:
    node = SetNode(id="s", type="set", assignments={"executed_playbooks_init": True})
    first = asyncio.run(SET.run(node, {"vars": {}}, None))  # type: ignore[arg-type]
    assert first["vars"]["executed_playbooks"] == []
    kept = asyncio.run(
        SET.run(node, {"vars": {"executed_playbooks": ["a"]}}, None)  # type: ignore[arg-type]
    )
    assert "executed_playbooks" not in kept["vars"]
    off = SetNode(id="s", type="set", assignments={"executed_playbooks_init": False})
    assert "executed_playbooks" not in asyncio.run(
        SET.run(off, {"vars": {}}, None)  # type: ignore[arg-type]
    )["vars"]


def _callee(**param: Any) -> Playbook:
    return Playbook.model_validate({
        "name": "callee", "description": "d", "start_node": "a",
        "input_schema": [{"name": "items", "description": "d", **param}],
        "nodes": [{"id": "a", "type": "pass"}],
    })


def test_untyped_parameters_take_any_value_typed_ones_are_checked() -> None:
    assert bind_args(_callee(), {"items": ["a"]})["items"] == ["a"]
    with pytest.raises(CallArgumentError, match="must be a string, got array"):
        bind_args(_callee(type="string"), {"items": ["a"]})


def test_metadata_is_accepted_undeclared_and_must_be_an_object() -> None:
    bound = bind_args(_callee(required=False), {"metadata": {"m": 1}})
    assert bound["metadata"] == {"m": 1}
    with pytest.raises(CallArgumentError, match="argument 'metadata' must be an object"):
        bind_args(_callee(required=False), {"metadata": "text"})
