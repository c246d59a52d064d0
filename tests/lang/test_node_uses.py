"""What the built-in node models declare for the checks (:mod:`sea.lang.uses`): the checks
ask these instead of testing a node's type, so each declaration is pinned here, and the one
the checks did not see before (an ``actions`` node's ``memorize`` tags) is checked."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from sea.lang.loader import check_document
from sea.lang.node_models import Node
from sea.lang.uses import Answer, CalleeUse, ChosenCallee, ExpressionUse, TagUse, ToolUse

NODE: TypeAdapter[Any] = TypeAdapter(Node)


def _node(**fields: Any) -> Any:
    return NODE.validate_python({"id": "n", **fields})


def test_an_llm_node_declares_its_answer_tools_tags_and_streaming() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    node = _node(type="llm", response_schema=schema, output_key="out",
                 output_mapping={"out.a": "picked"}, memorize={"tags": ["x"]}, speak=True)
    assert node.answer() == Answer(schema, "response_schema", "out", {"out.a": "picked"})
    assert node.answer().path("out.a") == ["a"]
    assert list(node.tags_written()) == [TagUse("x", ("memorize", "tags", 0))]
    assert node.streams() is True
    plain = _node(type="llm", available_tools=["t"])
    assert plain.answer() is None and plain.streams() is False
    assert list(plain.tools_named()) == [ToolUse("t", ("available_tools", 0))]


def test_tool_set_call_and_memorize_nodes_declare_what_they_name() -> None:
    tool = _node(type="tool", action="t", args_input={"q": "a.b"})
    (use,) = tool.tools_named()
    assert (use.tool, use.at, use.missing_at) == ("t", ("action",), ("action",))
    assert use.arguments == {"args": None, "args_input": {"q": "a.b"}}
    assert use.literal_fields == frozenset({"args"})
    assert list(_node(type="set", assignments={"x": "=1", "y": "1"}).expressions()) == [
        ExpressionUse("1", ("assignments", "x"))
    ]
    assert list(_node(type="subplay", playbook="p", args={"a": 1}).callees_named()) == [
        CalleeUse("p", ("playbook",), {"a": 1}, "args", checked=True)
    ]
    exec_ = _node(type="exec", allowed_playbooks=["p"])
    assert list(exec_.callees_named()) == [CalleeUse("p", ("allowed_playbooks", 0))]
    assert exec_.chosen_callee() == ChosenCallee(("p",))
    assert _node(type="exec").chosen_callee() == ChosenCallee(None)
    assert _node(type="subplay", playbook="p").chosen_callee() is None
    assert list(_node(type="memorize", tags=["a"]).tags_written()) == [TagUse("a", ("tags", 0))]


def test_an_actions_node_s_memorize_tags_are_checked_for_reserved_ones() -> None:
    document = {
        "name": "plans", "description": "d", "start_node": "n",
        "nodes": [{"id": "n", "type": "actions", "action": "do it", "available_tools": ["t"],
                   "memorize": {"tags": ["fine", "playbook:forged"]}}],
    }
    found = [(d.code, d.pointer) for d in check_document(json.dumps(document)).diagnostics]
    assert found == [("SEA035", "/nodes/0/memorize/tags/1")]
