"""A step of pure nodes and the node after them (:mod:`sea.engine.compiler`), and a callee
that runs as one step would, run in its caller's step (:func:`sea.engine.calls.call_playbook`):
a recoverable pulse stopped inside one goes on from the checkpoint before it, makes no
model call a written checkpoint holds again and stores nothing twice; a node that may
pause keeps a step of its own."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import NodeStarted
from sea.engine.journal import CHANNEL
from sea.engine.limits import Limits
from sea.engine.tools.builtin import builtin_tools
from sea.engine.tools.engine_tool import REPLAYABLE, replayable
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.engine.test_runtime import send_mail

AIKO = Persona("aiko", "Aiko", "")

PLAYBOOK: dict[str, Any] = {
    "name": "fused", "description": "Two model calls, a write between them.",
    "start_node": "a",
    "nodes": [
        {"id": "a", "type": "llm", "action": "First: {input}", "context_profile": "worker",
         "output_key": "first", "next": "b"},
        {"id": "b", "type": "set", "assignments": {"note": "noted {first}"}, "next": "c"},
        {"id": "c", "type": "memorize", "action": "{note}", "role": "user", "next": "d"},
        {"id": "d", "type": "set", "assignments": {"again": "{note} again"}, "next": "e"},
        {"id": "e", "type": "llm", "action": "Second: {note}", "context_profile": "worker",
         "output_key": "second"},
    ],
}
SCRIPT = {"fused.a": ["one", "unused"], "fused.e": ["two", "unused"],
          "look_then_say.speak": ["seen it"], "act_then_say.speak": ["did it"],
          "say.speak": ["hello", "unused"], "say_twice.speak": ["hello", "unused"],
          "say_either.brief": ["hello", "unused"], "say_either.warm": ["unused"]}

SAY: dict[str, Any] = {
    "name": "say", "description": "One model call, after a pure node.",
    "output_schema": ["said"], "start_node": "ready",
    "nodes": [
        {"id": "ready", "type": "set", "assignments": {"topic": "{input}"}, "next": "speak"},
        {"id": "speak", "type": "llm", "action": "Say: {topic}", "context_profile": "worker",
         "output_key": "said"},
    ],
}
SAY_TWICE: dict[str, Any] = {  # a model call, then a write: two steps
    "name": "say_twice", "description": "A model call, then a write.",
    "output_schema": ["said"], "start_node": "speak",
    "nodes": [
        {"id": "speak", "type": "llm", "action": "Say: {input}", "context_profile": "worker",
         "output_key": "said", "next": "keep"},
        {"id": "keep", "type": "memorize", "action": "{said}", "role": "assistant"},
    ],
}
SAY_EITHER: dict[str, Any] = {  # a model call of two, each ending the run: one step
    "name": "say_either", "description": "One of two model calls.",
    "output_schema": ["said"], "start_node": "which",
    "nodes": [
        {"id": "which", "type": "pass", "conditional_next": {
            "field": "input", "operator": "eq", "cases": {"hi": "brief"}, "default": "warm"}},
        {"id": "brief", "type": "llm", "action": "Briefly: {input}",
         "context_profile": "worker", "output_key": "said"},
        {"id": "warm", "type": "llm", "action": "Warmly: {input}",
         "context_profile": "worker", "output_key": "said"},
    ],
}


@tool
def look() -> str:
    """Read something (marked: a call may be made again)."""
    return "seen"


@tool
def act() -> str:
    """Do something (not marked)."""
    return "done"


look.metadata = {REPLAYABLE: True}


def _tool_then_say(name: str) -> dict[str, Any]:
    return {"name": f"{name}_then_say", "description": "A tool, then a model call.",
            "output_schema": ["said"], "start_node": "use",
            "nodes": [
                {"id": "use", "type": "tool", "action": name, "output_key": "got",
                 "next": "speak"},
                {"id": "speak", "type": "llm", "action": "Say: {got}",
                 "context_profile": "worker", "output_key": "said"},
            ]}


def _caller(callee: str) -> dict[str, Any]:
    return {"name": f"calls_{callee}", "description": "Calls, then writes.",
            "start_node": "talk",
            "nodes": [
                {"id": "talk", "type": "subplay", "playbook": callee, "next": "after"},
                {"id": "after", "type": "memorize", "action": "then {said}", "role": "user"},
            ]}

ASKS: dict[str, Any] = {
    "name": "asks", "description": "A pure node before a tool a person is asked about.",
    "start_node": "p",
    "nodes": [
        {"id": "p", "type": "set", "assignments": {"to": "dave"}, "next": "send"},
        {"id": "send", "type": "tool", "action": "send_mail", "args": {"to": "{to}"},
         "output_key": "outcome"},
    ],
}


def _runtime(tmp_path: Path, saver: InMemorySaver, model: ScriptedChatModel
             ) -> tuple[Runtime, SQLiteStore]:
    (tmp_path / "fused.json").write_text(json.dumps(PLAYBOOK))
    for document in (ASKS, SAY, SAY_TWICE, SAY_EITHER, _caller("say"), _caller("say_twice"),
                     _caller("say_either"),
                     _tool_then_say("look"), _tool_then_say("act"),
                     _caller("look_then_say"), _caller("act_then_say")):
        (tmp_path / f"{document['name']}.json").write_text(json.dumps(document))
    store = SQLiteStore(tmp_path / "memory.sqlite")
    limits = Limits(approval_tools=frozenset({"send_mail"}))
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(model), library=tmp_path,
                                    keep_checkpoints=True, limits=limits,
                                    tools=[send_mail, look, act]),
                      checkpointer=saver)
    return runtime, store


def _graph_tasks(saver: InMemorySaver, pulse_id: str) -> set[str]:
    last = saver.get_tuple({"configurable": {"thread_id": pulse_id, "checkpoint_ns": ""}})
    assert last is not None
    return {name for name in last.checkpoint["versions_seen"] if not name.startswith("__")}


def _journal(saver: InMemorySaver, pulse_id: str) -> list[dict[str, Any]]:
    """The kept node runs of the pulse (:mod:`sea.engine.journal`), as its saver holds
    them."""
    kept = []
    for (thread, _, _), writes in saver.writes.items():
        for _, channel, value, _ in writes.values():
            if thread == pulse_id and channel == CHANNEL:
                kept.append(saver.serde.loads_typed(value))
    return kept


def _namespaces(saver: InMemorySaver) -> set[str]:
    return {ns.split(":")[0] for ns in saver.storage.get("p", {})}


def _stopped_after_the_call(runtime: Runtime, saver: InMemorySaver, caller: str) -> None:
    """Run ``caller`` (its ``talk`` node calls the callee) until its ``after`` node, and
    stop it there: the calling step's checkpoint is the only one (none of the callee's)."""
    _stopped_at(runtime, "after", caller)
    assert _namespaces(saver) == {""}  # no checkpoint of the callee's own
    assert _graph_tasks(saver, "p") == {"talk"}


def _stopped_at(runtime: Runtime, node: str, playbook: str = "fused",
                pulse_id: str = "p") -> None:
    """Run the pulse ``pulse_id`` until ``node`` is about to run, and stop it there (as a
    process that dies: nothing after is written)."""

    async def main() -> None:
        stream = runtime.astream_pulse(AIKO, playbook, "hi", pulse_id=pulse_id, recover=True)
        async for event in stream:
            if isinstance(event, NodeStarted) and event.node == node:
                break
        await stream.aclose()

    asyncio.run(main())


def _continued(runtime: Any, store: Any) -> tuple[Any, list[str]]:
    """Pulse ``p`` continued, and what it stored in all; the runtime and store closed."""
    try:
        result = runtime.run_continue("p")
        return result, [m.content for m in store.pulse_messages(AIKO.id, "p")]
    finally:
        runtime.close()
        store.close()


def test_a_pure_node_and_the_node_after_it_take_one_step(tmp_path: Path) -> None:
    """In a recoverable pulse a write (keyed by the node run) goes with the pure nodes
    around it; in another pulse it ends the step."""
    saver, model = InMemorySaver(), ScriptedChatModel.from_mapping({"responses": SCRIPT})
    runtime, store = _runtime(tmp_path, saver, model)
    try:
        result = runtime.run_pulse(AIKO, "fused", "hi", pulse_id="p", recover=True)
        plain = runtime.run_pulse(AIKO, "fused", "hi", pulse_id="q")
    finally:
        runtime.close()
        store.close()
    assert result.status == "ok" and plain.status == "ok", (result.error, plain.error)
    assert [e.node for e in result.events if isinstance(e, NodeStarted)] == list("abcde")
    assert [e.node for e in plain.events if isinstance(e, NodeStarted)] == list("abcde")
    assert _graph_tasks(saver, "p") == {"a", "b"}  # a; b with c, d and e
    assert _graph_tasks(saver, "q") == {"a", "b", "d"}  # a; b with c; d with e


def test_stopped_inside_a_fused_step_it_goes_on_without_a_model_call_again(
    tmp_path: Path
) -> None:
    """Stopped in b's step after c wrote and d ran (e's model call not made): continued,
    the step runs again from b; a's model call, which an earlier checkpoint holds, is not
    made again, and c's write is not stored twice."""
    saver, model = InMemorySaver(), ScriptedChatModel.from_mapping({"responses": SCRIPT})
    runtime, store = _runtime(tmp_path, saver, model)
    _stopped_at(runtime, "e")
    assert _graph_tasks(saver, "p") == {"a"}
    result, written = _continued(runtime, store)
    assert result.status == "ok", result.error
    assert [e.node for e in result.events if isinstance(e, NodeStarted)] == list("bcde")
    assert Counter(call.key for call in model.calls) == {"fused.a": 1, "fused.e": 1}
    assert written == ["hi", "noted one"]


def test_stopped_before_a_fused_write_it_stores_it_once(tmp_path: Path) -> None:
    """Stopped in b's step before c wrote: continued, b and c run again, the write is
    stored once and a's model call is not made again."""
    saver, model = InMemorySaver(), ScriptedChatModel.from_mapping({"responses": SCRIPT})
    runtime, store = _runtime(tmp_path, saver, model)
    _stopped_at(runtime, "c")
    assert _graph_tasks(saver, "p") == {"a"}
    result, written = _continued(runtime, store)
    assert result.status == "ok", result.error
    assert [e.node for e in result.events if isinstance(e, NodeStarted)] == list("bcde")
    assert Counter(call.key for call in model.calls) == {"fused.a": 1, "fused.e": 1}
    assert written == ["hi", "noted one"]


def test_a_node_that_may_pause_keeps_a_step_of_its_own(tmp_path: Path) -> None:
    saver = InMemorySaver()
    runtime, store = _runtime(tmp_path, saver, ScriptedChatModel.from_mapping({}))
    try:
        waiting = runtime.run_pulse(AIKO, "asks", "", pulse_id="w", recover=True)
        assert waiting.status == "waiting", waiting.error
        assert _graph_tasks(saver, "w") == {"p"}  # p's step ended before the ask
        resumed = runtime.run_resume("w", "approve")
    finally:
        runtime.close()
        store.close()
    assert resumed.status == "ok", resumed.error
    assert [e.node for e in resumed.events if isinstance(e, NodeStarted)] == ["send"]


def test_a_callee_of_one_step_runs_in_its_callers_step(tmp_path: Path) -> None:
    """Stopped after the calling step's checkpoint: continued, the callee's model call is
    not made again (a callee of more steps: :mod:`tests.engine.test_journal`)."""
    saver, model = InMemorySaver(), ScriptedChatModel.from_mapping({"responses": SCRIPT})
    runtime, store = _runtime(tmp_path, saver, model)
    try:
        _stopped_after_the_call(runtime, saver, "calls_say")
        result, written = _continued(runtime, store)
    finally:
        runtime.close()
        store.close()
    assert result.status == "ok", result.error
    assert [e.node for e in result.events if isinstance(e, NodeStarted)] == ["after"]
    assert Counter(call.key for call in model.calls) == {"say.speak": 1}
    assert written == ["hi", "then hello"]


def test_a_callee_of_two_ending_model_calls_runs_in_its_callers_step(tmp_path: Path) -> None:
    """Each of its model calls ends its run, so a run makes one: stopped after the calling
    step's checkpoint and continued, that call is not made again."""
    saver, model = InMemorySaver(), ScriptedChatModel.from_mapping({"responses": SCRIPT})
    runtime, store = _runtime(tmp_path, saver, model)
    try:
        _stopped_after_the_call(runtime, saver, "calls_say_either")
        result, written = _continued(runtime, store)
    finally:
        runtime.close()
        store.close()
    assert result.status == "ok", result.error
    assert [e.node for e in result.events if isinstance(e, NodeStarted)] == ["after"]
    assert Counter(call.key for call in model.calls) == {"say_either.brief": 1}
    assert written == ["hi", "then hello"]


def test_a_callee_whose_tool_may_be_called_again_runs_in_its_callers_step(
    tmp_path: Path
) -> None:
    """A tool marked replayable (the engine's reading tools are) before the model call:
    the callee runs as one step would; an unmarked tool's call is kept
    (:mod:`sea.engine.journal`)."""
    saver, model = InMemorySaver(), ScriptedChatModel.from_mapping({"responses": SCRIPT})
    runtime, store = _runtime(tmp_path, saver, model)
    try:
        looked = runtime.run_pulse(AIKO, "calls_look_then_say", "hi", pulse_id="p",
                                   recover=True)
        acted = runtime.run_pulse(AIKO, "calls_act_then_say", "hi", pulse_id="q",
                                  recover=True)
        written = {m.content for pid in ("p", "q") for m in store.pulse_messages(AIKO.id, pid)}
    finally:
        runtime.close()
        store.close()
    assert looked.status == "ok" and acted.status == "ok", (looked.error, acted.error)
    assert {"then seen it", "then did it"} <= written
    assert _namespaces(saver) == {""}
    assert {ns.split(":")[0] for ns in saver.storage.get("q", {})} == {""}
    assert _journal(saver, "p") == []  # its callee runs as one step would
    assert [k["node"] for k in _journal(saver, "q")] == ["use", "speak"]


def test_the_engines_reading_tools_are_marked_replayable(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.sqlite")
    try:
        tools = builtin_tools(store=store, persona_id="aiko",
                              library=PlaybookLibrary.bundled([]))
    finally:
        store.close()
    marked = {t.name for t in tools if replayable(t)}
    assert {"rank_playbooks", "plan_memory", "memory_search", "memory_recent",
            "list_available_playbooks"} <= marked
    assert not replayable(act) and replayable(look)
