"""subplay and exec as function calls: schemas, results back, nesting, isolation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from pydantic import ValidationError

from saimemory.records import Persona
from sea.chat.scripted import ScriptedChatModel
from sea.engine.calls import bind_args
from sea.engine.limits import Limits
from sea.errors import CallArgumentError
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.models import Playbook
from sea.llm.models import ModelSet
from tests.engine.conftest import PLAYBOOKS, MakeRuntime


def test_subplay_null_argument_counts_as_missing(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "caller_schemas", "", args={"topic": None})
    # topic is declared an object here, and None is passed: the callee requires a string
    assert result.outputs["result"] == "failed"
    assert result.outputs["error"]["code"] == "SEA570"
    assert "required argument 'topic' is missing" in result.outputs["error"]["message"]


def test_subplay_argument_type_checked(make_runtime: MakeRuntime, persona: Persona) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "caller_schemas", "", args={"topic": {"a": 1}})
    assert result.outputs["result"] == "failed"
    message = result.outputs["error"]["message"]
    assert "argument 'topic' must be a string, got object" in message


def test_subplay_missing_required_argument_is_caught_before_running(
    make_runtime: MakeRuntime, persona: Persona, store: Any
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "caller_missing", "", pulse_id="cm")
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "SEA052"
    assert "requires the argument `topic`" in result.error["message"]
    assert not [e for e in result.events if e.kind == "node_start"]
    assert [m.content for m in store.pulse_messages(persona.id, "cm")] == []  # no input given


def test_nested_calls_defaults_and_propagate_output(
    make_runtime: MakeRuntime, persona: Persona, store: Any
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "nest_a", "", pulse_id="n1")
    assert result.status == "ok", result.error
    assert result.outputs == {"result": "topic=deep depth=2"}
    assert result.texts == ["b saw topic=deep depth=2"]  # nest_b's output propagated to nest_a
    note = store.pulse_messages(persona.id, "n1")[-1]
    assert "playbook:nest_b" in note.tags and "node:note" in note.tags


def test_depth_limit(make_runtime: MakeRuntime, persona: Persona) -> None:
    runtime, _ = make_runtime(limits=Limits(max_depth=1))
    result = runtime.run_pulse(persona, "nest_a", "")
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "SEA572"
    assert "nest_a → nest_b → echo_topic" in result.error["message"]


def test_recursion_detected(make_runtime: MakeRuntime, persona: Persona) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "recurse", "")
    assert result.outputs["stopped"] == "SEA571"


def test_isolated_callee_sees_history_not_callers_pulse(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, model = make_runtime({"responses": {"sub_speak.compose": ["ok"]}})
    result = runtime.run_pulse(persona, "iso_main", "question?")
    assert result.status == "ok", result.error
    [call] = [c for c in model.calls if c.key == "sub_speak.compose"]
    contents = [m["content"] for m in call.messages]
    assert "question?" in contents
    assert not any("caller secret" in c for c in contents)


def test_exec_drops_undeclared_router_arguments_with_a_warning(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    answer = {"playbook": "echo_topic", "args": {"topic": "cats", "mood": "happy"}}
    runtime, _ = make_runtime({"responses": {"router_main.route": [answer]}})
    result = runtime.run_pulse(persona, "router_main", "cats")
    assert result.status == "ok", result.error
    assert result.outputs["result"] == "topic=cats depth=1"
    [warning] = [e for e in result.events if e.kind == "warning"]
    assert warning.code == "arguments_dropped" and "mood" in warning.message


def test_exec_router_argument_of_wrong_type_takes_error_next(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    answer = {"playbook": "echo_topic", "args": {"topic": "cats", "depth": "deep"}}
    runtime, _ = make_runtime({"responses": {"router_main.route": [answer]}})
    result = runtime.run_pulse(persona, "router_main", "cats")
    assert result.status == "ok", result.error
    assert result.outputs["result"] == "failed: SEA570 at run"


def test_a_default_of_the_wrong_type_is_refused_when_the_playbook_loads() -> None:
    document = {
        "name": "counts",
        "description": "Has a default that is not an integer.",
        "input_schema": [
            {"name": "limit", "type": "integer", "required": False, "default": "five"}
        ],
        "start_node": "end",
        "nodes": [{"id": "end", "type": "pass"}],
    }
    with pytest.raises(ValidationError) as raised:
        Playbook.model_validate(document)
    assert "the default of parameter 'limit' must be an integer, got string 'five'" in str(
        raised.value
    )
    document["input_schema"] = [
        {"name": "limit", "type": "integer", "required": False, "default": 5}
    ]
    callee = Playbook.model_validate(document)
    assert bind_args(callee, {}) == {"limit": 5}
    with pytest.raises(CallArgumentError) as call_error:
        bind_args(callee, {"limit": "ten"}, playbook="caller", node="call")
    assert "argument 'limit' must be an integer, got string 'ten'" in str(call_error.value)


def test_a_pulse_calls_each_playbook_as_it_was_when_first_called(
    tmp_path: Path, store: Any, persona: Persona
) -> None:
    folder = tmp_path / "playbooks"
    folder.mkdir()
    callee = folder / "echo_topic.json"
    callee.write_text((PLAYBOOKS / "echo_topic.json").read_text())
    caller = {
        "name": "calls_twice", "description": "Calls echo_topic, edits it, calls it again.",
        "output_schema": ["first", "second"], "start_node": "one",
        "nodes": [
            {"id": "one", "type": "subplay", "playbook": "echo_topic",
             "args": {"topic": "a"}, "next": "keep"},
            {"id": "keep", "type": "set", "assignments": {"first": "{result}"}, "next": "edit"},
            {"id": "edit", "type": "tool", "action": "edit_callee", "next": "two"},
            {"id": "two", "type": "subplay", "playbook": "echo_topic",
             "args": {"topic": "b"}, "next": "again"},
            {"id": "again", "type": "set", "assignments": {"second": "{result}"}},
        ],
    }
    (folder / "calls_twice.json").write_text(json.dumps(caller))

    @tool
    def edit_callee() -> str:
        """Rewrite echo_topic while the pulse runs."""
        document = json.loads(callee.read_text())
        document["nodes"][0]["assignments"]["result"] = "edited {topic}"
        callee.write_text(json.dumps(document))
        return "edited"

    runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      tools=[edit_callee], library=folder,
                      checkpoint_path=tmp_path / "checkpoints.sqlite"))
    try:
        first = runtime.run_pulse(persona, "calls_twice", "")
        assert first.status == "ok", first.error
        assert first.outputs == {"first": "topic=a depth=1", "second": "topic=b depth=1"}
        later = runtime.run_pulse(persona, "calls_twice", "")  # a new pulse reads it again
        assert later.outputs["first"] == "edited a"
    finally:
        runtime.close()
