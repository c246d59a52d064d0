"""A called playbook of several steps runs in its caller's step in a recoverable pulse,
keeping the runs of its nodes that may not run again (:mod:`sea.engine.journal`): stopped
or killed anywhere, the pulse goes on without making a kept model call or tool call again
and stores nothing twice; a playbook changed in between fails the pulse saying so."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import NodeStarted, ToolCalled
from sea.engine.limits import Limits
from sea.host.config import RuntimeConfig
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.llm.budget import Budget
from sea.llm.models import ModelSet
from tests.engine.test_fused_steps import (
    AIKO,
    SAY_TWICE,
    SCRIPT,
    _caller,
    _continued,
    _journal,
    _namespaces,
    _runtime,
    _stopped_at,
)
from tests.workers.test_continue import _DyingSaver, _killed

TWO_TALKS: dict[str, Any] = {  # a model call, a write, a model call: three steps of its own
    "name": "two_talks", "description": "Talks, notes, talks again.",
    "output_schema": ["second"], "start_node": "a",
    "nodes": [
        {"id": "a", "type": "llm", "action": "First: {input}", "context_profile": "worker",
         "output_key": "first", "next": "b"},
        {"id": "b", "type": "memorize", "action": "noted {first}", "role": "user",
         "next": "c"},
        {"id": "c", "type": "llm", "action": "Second: {first}", "context_profile": "worker",
         "output_key": "second"},
    ],
}
CALLS_TWO_TALKS: dict[str, Any] = {
    "name": "calls_two_talks", "description": "Calls, then writes.", "start_node": "talk",
    "nodes": [
        {"id": "talk", "type": "subplay", "playbook": "two_talks", "next": "after"},
        {"id": "after", "type": "memorize", "action": "then {second}", "role": "user"},
    ],
}
CALLS_TWO_TALKS_THEN_ASKS: dict[str, Any] = {
    "name": "calls_two_talks_then_asks", "description": "Calls, then asks the model.",
    "start_node": "talk",
    "nodes": [
        {"id": "talk", "type": "subplay", "playbook": "two_talks", "next": "ask"},
        {"id": "ask", "type": "llm", "action": "Third: {second}", "context_profile": "worker",
         "output_key": "third"},
    ],
}
TALKS_SCRIPT = {"two_talks.a": ["one"] * 3, "two_talks.c": ["two"] * 3,
                "calls_two_talks_then_asks.ask": ["three"] * 3}
ONE_PULSE = ["two_talks.a", "two_talks.c"]
STORED = [("user", "hi"), ("user", "noted one"), ("user", "then two")]


def test_a_callee_of_two_steps_runs_in_its_callers_step_keeping_its_model_call(
    tmp_path: Path
) -> None:
    """No graph of the callee's own: its model call is kept, its keyed write is not."""
    saver, model = InMemorySaver(), ScriptedChatModel.from_mapping({"responses": SCRIPT})
    runtime, store = _runtime(tmp_path, saver, model)
    try:
        result = runtime.run_pulse(AIKO, "calls_say_twice", "hi", pulse_id="p", recover=True)
        written = [m.content for m in store.pulse_messages(AIKO.id, "p")]
    finally:
        runtime.close()
        store.close()
    assert result.status == "ok", result.error
    assert _namespaces(saver) == {""}
    assert [(k["node"], k["update"]["vars"]) for k in _journal(saver, "p")] == [
        ("speak", {"said": "hello"})]
    assert written == ["hi", "hello", "then hello"]


@pytest.mark.parametrize(("caller", "stop", "started", "calls", "written"), [
    ("calls_say_twice", "keep", ["talk", "keep", "after"], {"say_twice.speak": 1},
     ["hi", "hello", "then hello"]),  # a model call, then a write
    ("calls_act_then_say", "speak", ["talk", "speak", "after"], {"act_then_say.speak": 1},
     ["hi", "then did it"]),  # a tool not marked replayable, then a model call
])
def test_stopped_after_a_kept_run_the_call_is_not_made_again(
    caller: str, stop: str, started: list[str], calls: dict[str, int], written: list[str],
    tmp_path: Path
) -> None:
    """Stopped as the callee's next node starts: continued, the calling step runs again,
    the kept model or tool call is taken from the journal, and the write is stored once."""
    saver, model = InMemorySaver(), ScriptedChatModel.from_mapping({"responses": SCRIPT})
    runtime, store = _runtime(tmp_path, saver, model)
    _stopped_at(runtime, stop, caller)
    result, stored = _continued(runtime, store)
    assert result.status == "ok", result.error
    assert [e.node for e in result.events if isinstance(e, NodeStarted)] == started
    assert not [e for e in result.events if isinstance(e, ToolCalled)]
    assert Counter(call.key for call in model.calls) == calls
    assert stored == written
    assert _namespaces(saver) == {""}


DSN = os.environ.get("SEA_TEST_POSTGRES_DSN")
SAVERS = ["sqlite", pytest.param("postgres", marks=[
    pytest.mark.postgres, pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")])]


@pytest.mark.parametrize("kind", SAVERS)
def test_kept_runs_are_read_back_from_the_savers_users_run(kind: str, tmp_path: Path) -> None:
    """LangGraph's SQLite and PostgreSQL savers keep and give back a step's kept runs: a
    pulse stopped in its callee goes on in another runtime without the model call again."""
    for document in (SAY_TWICE, _caller("say_twice")):
        (tmp_path / f"{document['name']}.json").write_text(json.dumps(document))
    checkpoints = DSN if kind == "postgres" else tmp_path / "checkpoints.sqlite"
    store = SQLiteStore(tmp_path / "memory.sqlite")
    pulse_id = uuid.uuid4().hex  # the PostgreSQL database's checkpoints outlive the test
    models = [ScriptedChatModel.from_mapping({"responses": SCRIPT}) for _ in range(2)]
    first, then = (Runtime(RuntimeConfig(  # kept: a stopped pulse's are not removed
        store, ModelSet.single(model), library=tmp_path, checkpoint_path=checkpoints,
        keep_checkpoints=True)) for model in models)

    try:
        _stopped_at(first, "keep", "calls_say_twice", pulse_id)
        result = then.run_continue(pulse_id)
        written = [m.content for m in store.pulse_messages(AIKO.id, pulse_id)]
    finally:
        first.close()
        then.close()
        store.close()
    assert result.status == "ok", result.error
    assert [e.node for e in result.events if isinstance(e, NodeStarted)] == [
        "talk", "keep", "after"]
    assert [c.key for m in models for c in m.calls] == ["say_twice.speak"]
    assert written == ["hi", "hello", "then hello"]


def test_a_callee_that_calls_a_playbook_keeps_its_graph_and_its_callee_keeps_runs(
    tmp_path: Path
) -> None:
    """``calls_say_twice`` calls a playbook, so called it runs in a graph of its own; its
    own callee runs in that graph's step, keeping its model call there: stopped inside
    it, the pulse goes on without making that call again."""
    saver, model = InMemorySaver(), ScriptedChatModel.from_mapping({"responses": SCRIPT})
    runtime, store = _runtime(tmp_path, saver, model)
    (tmp_path / "nested.json").write_text(json.dumps({
        "name": "nested", "description": "Calls a caller.", "start_node": "outer",
        "nodes": [{"id": "outer", "type": "subplay", "playbook": "calls_say_twice"}]}))
    _stopped_at(runtime, "keep", "nested")
    result, written = _continued(runtime, store)
    assert result.status == "ok", result.error
    assert _namespaces(saver) == {"", "outer"}
    assert Counter(call.key for call in model.calls) == {"say_twice.speak": 1}
    assert written == ["hi", "hello", "then hello"]


def test_a_playbook_changed_since_its_runs_were_kept_fails_the_pulse_saying_so(
    tmp_path: Path
) -> None:
    saver, model = InMemorySaver(), ScriptedChatModel.from_mapping({"responses": SCRIPT})
    runtime, store = _runtime(tmp_path, saver, model)
    _stopped_at(runtime, "keep", "calls_say_twice")
    runtime.close()
    store.close()
    runtime, store = _runtime(tmp_path, saver, model)  # another process
    changed = json.loads((tmp_path / "say_twice.json").read_text())
    changed["start_node"] = "utter"  # and the playbook changed
    changed["nodes"][0]["id"] = "utter"
    (tmp_path / "say_twice.json").write_text(json.dumps(changed))
    result, _ = _continued(runtime, store)
    assert result.status == "error" and result.error is not None
    assert result.error["node"] == "talk"
    assert "kept a run of node 'speak' where 'utter' runs now" in result.error["message"]
    assert Counter(call.key for call in model.calls) == {"say_twice.speak": 1}


class _Dying(_DyingSaver):
    """Checkpoints and writes in memory that stop being written at the ``die_at``-th of
    them (a kept run's writes count as a checkpoint does), as a killed process stops."""

    async def aput_writes(self, config: Any, writes: Any, task_id: str,
                          task_path: str = "") -> None:
        if not await self._dies():
            await super().aput_writes(config, writes, task_id, task_path)


def _talks_runtime(library: Path, store: SQLiteStore, saver: InMemorySaver,
                   limits: Limits | None = None) -> tuple[Runtime, ScriptedChatModel]:
    model = ScriptedChatModel.from_mapping({"responses": TALKS_SCRIPT})
    return Runtime(RuntimeConfig(store, ModelSet.single(model), library=library,
                                 keep_checkpoints=True, limits=limits or Limits()),
                   checkpointer=saver), model


def _talks_library(tmp_path: Path) -> Path:
    library = tmp_path / "library"
    library.mkdir()
    for document in (TWO_TALKS, CALLS_TWO_TALKS, CALLS_TWO_TALKS_THEN_ASKS):
        (library / f"{document['name']}.json").write_text(json.dumps(document))
    return library


def _died_and_went_on(library: Path, store: SQLiteStore, playbook: str, pulse_id: str,
                      die_at: int, limits: Limits | None = None
                      ) -> tuple[PulseResult, list[ScriptedChatModel], bool]:
    """``playbook``'s pulse dies at its ``die_at``-th write, then goes on in another
    runtime: its end, both runtimes' models, and whether it died."""
    saver = _Dying(die_at)
    runtime, model = _talks_runtime(library, store, saver, limits)
    try:
        asyncio.run(_killed(runtime, saver, pulse_id, playbook, "hi", AIKO))
    finally:
        runtime.close()
    died = saver.died.is_set()
    saver.revive()  # the next process
    runtime, again = _talks_runtime(library, store, saver, limits)
    try:
        result = runtime.run_pulse(AIKO, playbook, "hi", pulse_id=pulse_id, recover=True)
    finally:
        runtime.close()
    return result, [model, again], died


def test_killed_at_every_write_a_kept_model_call_is_not_made_again(tmp_path: Path) -> None:
    """The pulse dies at each of its checkpoints and kept runs in turn, and goes on in
    another runtime: it ends as the pulse that did not die, stores nothing twice, and makes
    again at most the one model call whose run was not kept yet."""
    library = _talks_library(tmp_path)
    store = SQLiteStore(tmp_path / "memory.sqlite")
    whole = _Dying(10**9)
    runtime, model = _talks_runtime(library, store, whole)
    try:
        assert runtime.run_pulse(AIKO, "calls_two_talks", "hi", pulse_id="w0",
                                 recover=True).status == "ok"
        assert [call.key for call in model.calls] == ONE_PULSE
        assert set(whole.storage["w0"]) == {""} and len(_journal(whole, "w0")) == 2
        died = 0
        for die_at in range(1, whole.puts + 2):
            pulse_id = f"w{die_at}"
            result, models, dead = _died_and_went_on(library, store, "calls_two_talks",
                                                     pulse_id, die_at)
            died += dead
            assert result.status == "ok", (die_at, result.error)
            stored = [(m.role, m.content) for m in store.pulse_messages(AIKO.id, pulse_id)]
            assert stored == STORED, die_at
            made = Counter(c.key for m in models for c in m.calls)
            assert sum(made.values()) <= len(ONE_PULSE) + 1, (die_at, made)
        assert died == whole.puts >= 4  # at each of the pulse's writes
    finally:
        runtime.close()
        store.close()


def test_a_kept_runs_spending_counts_against_the_budget_after_a_death(tmp_path: Path) -> None:
    """Two model calls allowed: the callee makes both, so the call after it is refused,
    wherever the pulse died and went on (a kept call counts as made, its run not made
    again, the last of the callee's included)."""
    library = _talks_library(tmp_path)
    store = SQLiteStore(tmp_path / "memory.sqlite")
    limits = Limits(budget=Budget(max_calls=2))
    whole = _Dying(10**9)
    runtime, _ = _talks_runtime(library, store, whole, limits)
    try:
        ended = runtime.run_pulse(AIKO, "calls_two_talks_then_asks", "hi", pulse_id="b0",
                                  recover=True)
        assert ended.status == "error" and ended.error is not None
        assert ended.error["code"] == "SEA566" and ended.error["node"] == "ask"
        for die_at in range(1, whole.puts + 2):
            result, (_, again), _ = _died_and_went_on(
                library, store, "calls_two_talks_then_asks", f"b{die_at}", die_at, limits)
            assert result.status == "error" and result.error is not None, die_at
            assert (result.error["code"], result.error["node"]) == ("SEA566", "ask"), die_at
            assert "calls_two_talks_then_asks.ask" not in {c.key for c in again.calls}
    finally:
        runtime.close()
        store.close()
