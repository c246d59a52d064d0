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
from sea.engine.approval import require_approval
from sea.engine.compiler import Compiler
from sea.engine.limits import Limits
from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import ALWAYS, NEVER, Policy, Waits, may_wait
from sea.host.config import RuntimeConfig
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.lang.loader import check_document
from sea.lang.node import FallibleNode
from sea.llm.models import ModelSet
from sea.nodes import builtin_registry
from tests.engine.test_pulse_savers import CountingSaver, _counting_runtime
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
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping(script)),
                      library=library, limits=limits,
                      keep_checkpoints=kept), checkpointer=CountingSaver())
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


def test_a_callee_that_cannot_wait_leaves_no_checkpoint_and_one_that_can_still_waits(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = _counting_runtime(store, library, saver)
    try:
        waiting = runtime.run_pulse(persona, "direct_then_wait", "dave")
        assert waiting.status == "waiting", waiting.error
        # the pulse's graph and approval_tool's (node `ask`); echo_topic (node `first`) ran
        # without a graph of its own
        assert _namespaces(saver) == {"", "ask"}
        resumed = runtime.run_resume(waiting.pulse_id, "approve")
        assert resumed.status == "ok", resumed.error
        assert resumed.outputs == {"result": "topic=dave depth=1", "outcome": "sent"}
    finally:
        runtime.close()


def test_a_recoverable_pulse_keeps_the_checkpoints_of_its_callees_but_those_of_one_step(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = _counting_runtime(store, library, saver)
    try:
        waiting = runtime.run_pulse(persona, "direct_then_wait", "dave", pulse_id="r",
                                    recover=True)
        assert waiting.status == "waiting", waiting.error
        # echo_topic (one set node) runs in its caller's step; approval_tool may wait
        assert _namespaces(saver) == {"", "ask"}
    finally:
        runtime.close()


def test_a_tool_the_policy_does_not_ask_about_lets_its_callee_run_directly(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      tools=[send_mail], library=library), checkpointer=saver)
    try:
        done = runtime.run_pulse(persona, "direct_then_wait", "erin")
        assert done.status == "ok", done.error
        assert done.outputs == {"result": "topic=erin depth=1", "outcome": "sent"}
        assert saver.wrote == []
    finally:
        runtime.close()


@tool
def where_am_i() -> list[str]:
    """The LangGraph tasks the call runs in, outermost first (none: no LangGraph run)."""
    try:
        namespace = get_config()["configurable"].get("checkpoint_ns", "")
    except RuntimeError:  # not called within a LangGraph run
        return []
    return [part.split(":")[0] for part in namespace.split("|") if part]


@pytest.mark.parametrize(("playbook", "options", "tasks"), [
    # it cannot wait: no LangGraph run at all
    ("probe_caller", {}, []),
    # the caller may wait, at its `ask` node: the nodes before it run without a graph,
    # which takes over at `ask`
    ("probe_then_ask", {"asks": True}, []),
    # each callee in a task of its own graph
    ("probe_caller", {"keep_checkpoints": True}, ["call", "probe"]),
    # a recoverable pulse: a callee of one step (probe_callee: its tool) in its caller's
    ("probe_caller", {"recover": True}, ["call"]),
])
def test_a_playbook_runs_in_a_graph_of_its_own_only_where_a_checkpoint_may_be_read(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona,
    playbook: str, options: dict[str, Any], tasks: list[str],
) -> None:
    asks = frozenset({"send_mail"}) if options.get("asks") else frozenset()
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      tools=[where_am_i, send_mail], library=library,
                      limits=Limits(approval_tools=asks),
                      keep_checkpoints=options.get("keep_checkpoints", False)),
                      checkpointer=CountingSaver())
    try:
        done = runtime.run_pulse(persona, playbook, "", pulse_id="w",
                                 recover=options.get("recover", False))
        assert done.status == ("waiting" if asks else "ok"), done.error
        seen = [e.result for e in done.events if e.kind == "tool_call" and e.tool == "where_am_i"]
        assert seen == [tasks]
    finally:
        runtime.close()


def _probes(result: PulseResult) -> list[Any]:
    return [e.result for e in result.events if e.kind == "tool_call" and e.tool == "where_am_i"]


def test_after_a_wait_a_callee_that_cannot_wait_runs_in_its_callers_task(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    """The graph took over at the first node (it may wait): what runs after the answer runs
    in it, as a resumed pulse's calls do, each callee in a graph of its own."""
    saver = CountingSaver()
    runtime = _counting_runtime(store, library, saver, tools=[send_mail, where_am_i])
    try:
        waiting = runtime.run_pulse(persona, "ask_then_probe", "", pulse_id="a")
        assert waiting.status == "waiting", waiting.error
        assert _probes(waiting) == []  # nothing ran before the wait
        resumed = runtime.run_resume("a", "approve")
        assert resumed.status == "ok", resumed.error
        assert _probes(resumed) == [["call", "probe"]]
        assert resumed.outputs == {"seen": ["call", "probe"], "outcome": "mailed dave"}
    finally:
        runtime.close()


def test_the_graph_takes_over_before_the_node_that_may_wait_and_goes_on_after_it(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    """The node before the wait ran without a graph; the graph's first checkpoint holds what
    it left, so the answer goes on from the wait and nothing runs twice."""
    saver = CountingSaver()
    runtime = _counting_runtime(store, library, saver, tools=[send_mail, where_am_i])
    try:
        waiting = runtime.run_pulse(persona, "probe_then_ask", "", pulse_id="b")
        assert waiting.status == "waiting", waiting.error
        assert _probes(waiting) == [[]]
        assert _namespaces(saver) == {""}  # the pulse's graph only
        resumed = runtime.run_resume("b", "approve")
        assert resumed.status == "ok", resumed.error
        assert _probes(resumed) == []  # `call` is not run again
        assert resumed.outputs == {"seen": []}
        assert sent_to(resumed) == ["[]"]
    finally:
        runtime.close()


def sent_to(result: PulseResult) -> list[Any]:
    return [e.args["to"] for e in result.events if e.kind == "tool_call" and e.tool == "send_mail"]


@pytest.mark.parametrize(("picked", "status", "probes", "namespaces"), [
    # the exec's callee cannot wait: no graph and no checkpoint, though the other one of
    # its list could
    ("probe_caller", "ok", [[]], set()),
    # its callee may wait: the graph takes over at the exec node, which runs the callee in
    # a graph of its own (task `run`), whose own callee cannot wait (in task `call`)
    ("probe_then_ask", "waiting", [["run", "call"]], {"", "run"}),
])
def test_an_exec_node_waits_where_the_playbook_it_runs_can(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona,
    picked: str, status: str, probes: list[Any], namespaces: set[str],
) -> None:
    saver = CountingSaver()
    runtime = _counting_runtime(store, library, saver, tools=[send_mail, where_am_i])
    try:
        done = runtime.run_pulse(persona, "exec_pick", picked, pulse_id="c")
        assert done.status == status, done.error
        assert _probes(done) == probes
        assert {n.split(":")[0] for _, n in saver.wrote} == namespaces
        if status == "waiting":
            resumed = runtime.run_resume("c", "approve")
            assert resumed.status == "ok", resumed.error
            assert _probes(resumed) == []
    finally:
        runtime.close()


class HostNode(FallibleNode):
    """A host's node type that says nothing of waiting."""

    known_mistakes: ClassVar[dict[str, str]] = {}
    type: Literal["host_step"] = Field(description="Node type: a host's step.")


class HostKind(NodeKind[HostNode]):
    model = HostNode

    async def run(self, node: HostNode, state: PlaybookState, frame: Frame) -> Update:
        return {}


class AskingNode(FallibleNode):
    """A host's node type that asks a person, though its kind says it never does."""

    known_mistakes: ClassVar[dict[str, str]] = {}
    type: Literal["host_ask"] = Field(description="Node type: a host's question.")


class MisdeclaredKind(NodeKind[AskingNode]):
    model = AskingNode

    def waits(self, node: AskingNode) -> Waits:
        return NEVER

    async def run(self, node: AskingNode, state: PlaybookState, frame: Frame) -> Update:
        require_approval(frame, node.id, "launching", {})
        return {}


def test_a_node_that_asks_where_no_pause_can_be_kept_fails_saying_so(
    tmp_path: Path, store: SQLiteStore, persona: Persona
) -> None:
    folder = tmp_path / "playbooks"
    folder.mkdir()
    document = {"name": "asks", "description": "d", "start_node": "q",
                "nodes": [{"id": "q", "type": "host_ask"}]}
    (folder / "asks.json").write_text(json.dumps(document))
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      library=folder, registry=builtin_registry().with_kinds(MisdeclaredKind())),
                      checkpointer=CountingSaver())
    try:
        failed = runtime.run_pulse(persona, "asks", "")
        assert failed.status == "error"
        assert failed.error is not None and failed.error["code"] == "SEA550"
        assert "launching needs a person's answer" in failed.error["message"]
        assert "found unable to pause" in failed.error["message"]
    finally:
        runtime.close()


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
    exec_ = _waits(registry, [{"id": "a", "type": "exec", "playbook_source": "x"}])
    assert exec_ == Waits(router_callees=True, unlisted=True)
    listed = _waits(registry, [{"id": "a", "type": "exec", "allowed_playbooks": ["q", "r"]}])
    assert listed == Waits(callees=("q", "r"), unlisted=True)
    hosted = registry.with_kinds(HostKind())
    assert _waits(hosted, [{"id": "a", "type": "host_step"}]) == ALWAYS


def _policy(asked: set[str], unlisted: bool = False, routed: tuple[str, ...] = ()) -> Policy:
    calls = {"a": Waits(callees=("b",)), "b": Waits(callees=("c", "a")),
             "c": Waits(tools=frozenset({"send_mail"})), "d": NEVER}
    return Policy(asked, unlisted, calls.__getitem__, lambda: routed)


def test_a_run_can_wait_where_any_playbook_it_may_call_can() -> None:
    calls_a = Waits(callees=("a",))
    assert may_wait(calls_a, _policy({"send_mail"}))
    assert not may_wait(calls_a, _policy({"other"}))  # the cycle a → b → a ends
    chooses = Waits(any_tool=True)
    assert may_wait(chooses, _policy({"other"}))
    assert not may_wait(chooses, _policy(set()))
    routed = Waits(router_callees=True, unlisted=True)
    assert not may_wait(routed, _policy({"send_mail"}, routed=("d",)))
    assert may_wait(routed, _policy({"send_mail"}, routed=("d", "c")))
    assert may_wait(routed, _policy(set(), unlisted=True))  # it may ask to call another
