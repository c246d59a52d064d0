"""Pure nodes in a graph: a ``set`` or ``pass`` runs the pure nodes after it, and the first
node after them that is not pure unless it may pause, in its own graph step, and routes by
a ``Command`` (:mod:`sea.engine.compiler`). Each node still runs in its own wrapper; what
changes is where checkpoints are taken. That the pulse a host sees is the same as without
a graph is the property of ``test_direct_properties``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import NodeEnded, NodeStarted
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.llm.models import ModelSet

AIKO = Persona("aiko", "Aiko", "")

PLAYBOOK: dict[str, Any] = {
    "name": "pure", "description": "Pure nodes around a write.",
    "input_schema": [{"name": "x", "type": "integer", "required": False, "default": 0}],
    "output_schema": ["x", "y", "z"], "start_node": "n0",
    "nodes": [
        {"id": "n0", "type": "set", "assignments": {"x": "={x} + 1"}, "next": "n1"},
        {"id": "n1", "type": "pass", "conditional_next": {
            "field": "x", "operator": "gte", "cases": {"5": None}, "default": "n2"}},
        {"id": "n2", "type": "set", "assignments": {"y": "={x} * 2"}, "next": "n3"},
        {"id": "n3", "type": "memorize", "action": "y is {y}", "role": "user", "next": "n4"},
        {"id": "n4", "type": "set", "assignments": {"z": "={y} + 1"}, "next": "n5"},
        {"id": "n5", "type": "pass"},
    ],
}


def _runtime(tmp_path: Path, saver: InMemorySaver) -> tuple[Runtime, SQLiteStore]:
    (tmp_path / "pure.json").write_text(json.dumps(PLAYBOOK))
    store = SQLiteStore(tmp_path / "memory.sqlite")
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      library=tmp_path, keep_checkpoints=True), checkpointer=saver)
    return runtime, store


def _graph_tasks(saver: InMemorySaver, pulse_id: str) -> set[str]:
    """The nodes that ran as graph steps of the pulse's top-level graph."""
    last = saver.get_tuple({"configurable": {"thread_id": pulse_id, "checkpoint_ns": ""}})
    assert last is not None
    return {name for name in last.checkpoint["versions_seen"] if not name.startswith("__")}


def test_consecutive_pure_nodes_take_one_graph_step(tmp_path: Path) -> None:
    saver = InMemorySaver()
    runtime, store = _runtime(tmp_path, saver)
    try:
        result = runtime.run_pulse(AIKO, "pure", "", pulse_id="p", recover=True)
        plain = runtime.run_pulse(AIKO, "pure", "", pulse_id="q")
    finally:
        runtime.close()
        store.close()
    for each in (result, plain):
        assert each.status == "ok", each.error
        assert each.outputs == {"x": 1, "y": 2, "z": 3}
        # every node ran in its own wrapper, in order...
        started = [e.node for e in each.events if isinstance(e, NodeStarted)]
        ended = [(e.node, e.outcome) for e in each.events if isinstance(e, NodeEnded)]
        assert started == ["n0", "n1", "n2", "n3", "n4", "n5"]
        assert ended == [(node, "ok") for node in started]
        assert each.usage["steps"] == 6
    # ...in one graph step in a recoverable pulse, whose write is keyed by the node run
    # (run again, it stores nothing twice); in another, two: n0 with n1, n2 and the
    # write, n4 with n5
    assert _graph_tasks(saver, "p") == {"n0"}
    assert _graph_tasks(saver, "q") == {"n0", "n4"}


def test_a_pure_run_that_ends_the_playbook_ends_the_graph(tmp_path: Path) -> None:
    saver = InMemorySaver()
    runtime, store = _runtime(tmp_path, saver)
    try:  # x starts at 4: n1 ends the playbook after n0
        result = runtime.run_pulse(AIKO, "pure", "", pulse_id="p", args={"x": 4})
    finally:
        runtime.close()
        store.close()
    assert result.status == "ok", result.error
    assert result.outputs == {"x": 5, "y": None, "z": None}
    assert [e.node for e in result.events if isinstance(e, NodeStarted)] == ["n0", "n1"]
    assert _graph_tasks(saver, "p") == {"n0"}


def test_a_pulse_stopped_in_a_pure_run_goes_on_from_its_first_node(tmp_path: Path) -> None:
    """Stopped inside n0's step after its write (n4 about to run), before any checkpoint
    of the graph: started again as a worker starts it, the step runs again from n0, and
    the write is not stored twice."""
    saver = InMemorySaver()
    runtime, store = _runtime(tmp_path, saver)

    async def stop_in_n4() -> None:
        stream = runtime.astream_pulse(AIKO, "pure", "", pulse_id="p", recover=True)
        async for event in stream:
            if isinstance(event, NodeStarted) and event.node == "n4":
                break
        await stream.aclose()

    try:
        asyncio.run(stop_in_n4())
        assert [m.content for m in store.pulse_messages(AIKO.id, "p")] == ["y is 2"]
        result = runtime.run_pulse(AIKO, "pure", "", pulse_id="p", recover=True)
        written = [m.content for m in store.pulse_messages(AIKO.id, "p")]
    finally:
        runtime.close()
        store.close()
    assert result.status == "ok", result.error
    assert result.outputs == {"x": 1, "y": 2, "z": 3}
    assert [e.node for e in result.events if isinstance(e, NodeStarted)] == [
        "n0", "n1", "n2", "n3", "n4", "n5"]
    assert written == ["y is 2"]
    assert _graph_tasks(saver, "p") == {"n0"}
