"""Called playbooks that cannot pause, run without a nested LangGraph run: the same pulse as
through a nested graph, event for event and write for write; and a nested graph still where
a callee can pause (or where the pulse keeps or recovers its checkpoints)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
from langchain_core.tools import tool
from langgraph.config import get_config
from pydantic import Field

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.compiler import Compiler
from sea.engine.limits import Limits
from sea.engine.pulse import Frame
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import ALWAYS, NEVER, Waits, may_wait
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.lang.loader import check_document
from sea.lang.node import FallibleNode
from sea.llm.models import ModelSet
from sea.nodes import builtin_registry
from tests.engine.test_pulse_savers import CountingSaver
from tests.engine.test_runtime import send_mail

ROUTER = {"playbook": "echo_topic", "args": {"topic": "cats", "depth": "deep"}}
CASES: dict[str, tuple[str, str, dict[str, Any], Limits | None]] = {
    "nested calls, defaults, propagated output": ("nest_a", "", {}, None),
    "a refused argument": ("caller_schemas", "", {}, None),
    "a bound passed inside the callee": ("calls_forever", "", {}, Limits(max_visits=3)),
    "a routed failure of the callee": ("routes_callee_failure", "x", {}, None),
    "the step budget spent in the callee": (
        "routes_callee_failure", "x", {}, Limits(max_steps=4)),
    "an exec whose callee fails": ("exec_fails", "x", {}, None),
    "an isolated callee that asks the model": (
        "iso_main", "question?", {"responses": {"sub_speak.compose": ["ok"]}}, None),
    "a router's argument of the wrong type": (
        "router_main", "cats", {"responses": {"router_main.route": [ROUTER]}}, None),
    "a gathering callee, then the speaker": (
        "flow_main", "tea", {"responses": {"sub_speak.compose": ["fine"]}}, None),
}

_TIMES = {"duration_s", "latency_s", "message_id", "pulse_id"}


def _timeless(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in _TIMES}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _seen(result: PulseResult, store: SQLiteStore, persona: Persona) -> dict[str, Any]:
    """What a host sees of a pulse, without times and ids."""
    events = [(event.kind, _timeless(dataclasses.asdict(event))) for event in result.events]
    written = [
        (m.role, m.content, m.tags, m.playbook, m.node, m.scope, m.thread)
        for m in store.pulse_messages(persona.id, result.pulse_id)
    ]
    return {
        "status": result.status, "outputs": result.outputs, "texts": result.texts,
        "spoken": result.spoken, "error": result.error, "usage": result.usage,
        "handled": result.handled_errors, "events": events, "written": written,
    }


def _pulse(
    tmp_path: Path, library: PlaybookLibrary, persona: Persona, case: str, *, kept: bool
) -> dict[str, Any]:
    playbook, text, script, limits = CASES[case]
    store = SQLiteStore(tmp_path / f"{kept}.sqlite")
    runtime = Runtime(store, ModelSet.single(ScriptedChatModel.from_mapping(script)),
                      library=library, limits=limits, checkpointer=CountingSaver(),
                      keep_checkpoints=kept)
    try:
        return _seen(runtime.run_pulse(persona, playbook, text, pulse_id="p"), store, persona)
    finally:
        runtime.close()
        store.close()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_direct_call_is_the_pulse_a_nested_graph_makes(
    tmp_path: Path, library: PlaybookLibrary, persona: Persona, case: str
) -> None:
    direct = _pulse(tmp_path, library, persona, case, kept=False)
    nested = _pulse(tmp_path, library, persona, case, kept=True)  # kept: nested graphs
    assert direct["events"], "the pulse ran no node"
    assert direct == nested


def _namespaces(saver: CountingSaver) -> set[str]:
    return {namespace.split(":")[0] for _, namespace in saver.wrote}


def _waiting_runtime(store: SQLiteStore, library: PlaybookLibrary, saver: CountingSaver,
                     **options: Any) -> Runtime:
    limits = Limits(approval_tools=frozenset({"send_mail"}))
    return Runtime(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                   tools=[send_mail], library=library, limits=limits, checkpointer=saver,
                   **options)


def test_a_callee_that_cannot_wait_leaves_no_checkpoint_and_one_that_can_still_waits(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = _waiting_runtime(store, library, saver)
    try:
        waiting = runtime.run_pulse(persona, "direct_then_wait", "dave")
        assert waiting.status == "waiting", waiting.error
        # the pulse's graph and approval_tool's (node `ask`); echo_topic (node `first`) ran
        # without a graph of its own
        assert _namespaces(saver) == {"", "ask"}
        resumed = runtime.resume(waiting.pulse_id, "approve")
        assert resumed.status == "ok", resumed.error
        assert resumed.outputs == {"result": "topic=dave depth=1", "outcome": "sent"}
    finally:
        runtime.close()


def test_a_recoverable_pulse_keeps_every_callees_checkpoints(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = _waiting_runtime(store, library, saver)
    try:
        waiting = runtime.run_pulse(persona, "direct_then_wait", "dave", pulse_id="r",
                                    recover=True)
        assert waiting.status == "waiting", waiting.error
        assert _namespaces(saver) == {"", "first", "ask"}
    finally:
        runtime.close()


def test_a_tool_the_policy_does_not_ask_about_lets_its_callee_run_directly(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = Runtime(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      tools=[send_mail], library=library, checkpointer=saver)
    try:
        done = runtime.run_pulse(persona, "direct_then_wait", "erin")
        assert done.status == "ok", done.error
        assert done.outputs == {"result": "topic=erin depth=1", "outcome": "sent"}
        assert saver.wrote == []
    finally:
        runtime.close()


@tool
def where_am_i() -> list[str]:
    """The LangGraph tasks the call runs in, outermost first."""
    return [part.split(":")[0] for part in get_config()["configurable"]["checkpoint_ns"].split("|")]


@pytest.mark.parametrize(("options", "tasks"), [
    ({}, ["call"]),  # the callee's node runs in the caller's task
    ({"keep_checkpoints": True}, ["call", "probe"]),  # in a task of the callee's own graph
    ({"recover": True}, ["call", "probe"]),
])
def test_a_callee_runs_in_its_callers_task_unless_its_checkpoints_may_be_read(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona,
    options: dict[str, Any], tasks: list[str],
) -> None:
    keep = options.get("keep_checkpoints", False)
    runtime = Runtime(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      tools=[where_am_i], library=library, checkpointer=CountingSaver(),
                      keep_checkpoints=keep)
    try:
        done = runtime.run_pulse(persona, "probe_caller", "", pulse_id="w",
                                 recover=options.get("recover", False))
        assert done.status == "ok", done.error
        assert done.outputs == {"seen": tasks}
    finally:
        runtime.close()


def test_a_callee_whose_tool_the_policy_asks_about_runs_in_a_graph_of_its_own(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    limits = Limits(approval_tools=frozenset({"send_mail"}))
    runtime = Runtime(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      tools=[where_am_i, send_mail], library=library, limits=limits,
                      checkpointer=CountingSaver())
    try:
        done = runtime.run_pulse(persona, "probe_caller", "")
        assert done.outputs == {"seen": ["call"]}  # send_mail is not probe_callee's tool
    finally:
        runtime.close()


class HostNode(FallibleNode):
    """A host's node type that says nothing of waiting."""

    known_mistakes: ClassVar[dict[str, str]] = {}
    type: Literal["host_step"] = Field(description="Node type: a host's step.")


class HostKind:
    model = HostNode

    async def run(self, node: HostNode, state: PlaybookState, frame: Frame) -> Update:
        return {}


def _waits(registry: Any, nodes: list[dict[str, Any]]) -> Waits:
    document = {"name": "p", "description": "d", "start_node": nodes[0]["id"], "nodes": nodes}
    checked = check_document(json.dumps(document), types=registry.node_types())
    assert checked.playbook is not None, checked.diagnostics
    return Compiler(registry).compiled(checked.playbook, "h").waits


def test_each_node_says_where_it_can_wait_and_a_kind_that_says_nothing_always_can() -> None:
    registry = builtin_registry()
    assert _waits(registry, [{"id": "a", "type": "set", "assignments": {"x": "1"}, "next": "b"},
                             {"id": "b", "type": "pass"}]) == NEVER
    tool = _waits(registry, [{"id": "a", "type": "tool", "action": "send_mail"}])
    assert tool == Waits(tools=frozenset({"send_mail"}))
    assert _waits(registry, [{"id": "a", "type": "subplay", "playbook": "q"}]).callees == ("q",)
    assert _waits(registry, [{"id": "a", "type": "exec", "playbook_source": "x"}]).always
    hosted = registry.with_kinds(HostKind())
    assert _waits(hosted, [{"id": "a", "type": "host_step"}]) == ALWAYS


def test_a_callee_can_wait_where_any_playbook_it_calls_can() -> None:
    calls = {"a": Waits(callees=("b",)), "b": Waits(callees=("c", "a")),
             "c": Waits(tools=frozenset({"send_mail"}))}
    assert may_wait(calls["a"], {"send_mail"}, True, calls.__getitem__)
    assert not may_wait(calls["a"], {"other"}, True, calls.__getitem__)  # the cycle ends
    chooses = Waits(any_tool=True)
    assert may_wait(chooses, {"other"}, True, calls.__getitem__)
    assert not may_wait(chooses, set(), False, calls.__getitem__)
