"""Seed 003 flow 3 with scripted models: the pattern the intent chose steers the model calls
that follow, in the playbooks called after it too, where a node takes it
(``intent_patterns``); the call records and the trace say so, and the model stays the
node's profile's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import Event
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from sea.trace.recorder import TraceRecorder
from tests.e2e.conftest import PERSONA, contents


def intent(confidence: float, action_type: str, complexity: str) -> dict[str, Any]:
    return {"action_type": action_type, "complexity": complexity, "confidence": confidence,
            "reasoning": "clear enough"}


PLAN = intent(0.8, "plan_generation", "moderate")  # → base_main_specialized
TALK = intent(0.7, "direct_response", "moderate")  # → base_main
QUICK = intent(0.95, "direct_response", "simple")  # → base_specialized

OUTER = {
    "name": "steered",
    "description": "Reads the intent, then answers in a playbook of its own.",
    "start_node": "intent",
    "nodes": [
        {"id": "intent", "type": "subplay", "playbook": "sub_intent", "next": "inner"},
        {"id": "inner", "type": "subplay", "playbook": "steered_inner"},
    ],
}
INNER = {
    "name": "steered_inner",
    "description": "Answers; its node takes the intent's pattern when it is a Main one.",
    "output_schema": ["answer"],
    "start_node": "answer",
    "nodes": [
        {"id": "answer", "type": "llm", "context_profile": "worker",
         "intent_patterns": ["base_main", "base_main_specialized"],
         "action": "Answer the user briefly.", "output_key": "answer"},
    ],
}


def runtime(store: SQLiteStore, tmp_path: Path, light: dict[str, list[Any]],
            normal: dict[str, list[Any]]) -> Runtime:
    folder = tmp_path / "playbooks"
    folder.mkdir(exist_ok=True)
    for playbook in (OUTER, INNER):
        (folder / f"{playbook['name']}.json").write_text(json.dumps(playbook), "utf-8")
    models = ModelSet(normal=ScriptedChatModel(model_name="normal", responses=normal),
                      lightweight=ScriptedChatModel(model_name="light", responses=light))
    return Runtime(RuntimeConfig(store, models, library=PlaybookLibrary.bundled([folder]),
                                 checkpoint_path=tmp_path / "checkpoints.sqlite"))


def test_a_called_playbooks_node_takes_the_intents_pattern(
    store: SQLiteStore, tmp_path: Path
) -> None:
    light = {"sub_intent.analyze": [TALK]}
    normal = {"steered_inner.answer": ["Hi!"]}
    with runtime(store, tmp_path, light, normal) as made:
        result = made.run_pulse(PERSONA, "steered", "Hello there, Aoi.")
    assert result.status == "ok", result.error
    answer = next(c for c in result.llm_calls if c.node == "answer")
    # worker is base_specialized on the normal model: steered to base_main, it sees the
    # conversation (the user's message) it would not see otherwise; the model is the same
    assert (answer.pattern, answer.intent_pattern, answer.model) == (
        "base_main", "base_main", "normal")
    assert "Hello there, Aoi." in contents(answer.messages)
    assert [part["part"] for part in answer.context] == ["base", "history", "prompt"]
    analyze = next(c for c in result.llm_calls if c.node == "analyze")
    assert analyze.intent_pattern is None  # sub_intent's own call takes no intent


def test_a_pattern_the_node_does_not_take_leaves_its_profile(
    store: SQLiteStore, tmp_path: Path
) -> None:
    light = {"sub_intent.analyze": [QUICK]}
    normal = {"steered_inner.answer": ["Hi!"]}
    with runtime(store, tmp_path, light, normal) as made:
        result = made.run_pulse(PERSONA, "steered", "Hello there, Aoi.")
    answer = next(c for c in result.llm_calls if c.node == "answer")
    assert (answer.pattern, answer.intent_pattern) == ("base_specialized", None)
    assert "Hello there, Aoi." not in contents(answer.messages)


def test_meta_intent_speaks_with_the_intents_pattern_in_records_and_trace(
    store: SQLiteStore, tmp_path: Path
) -> None:
    light = {"sub_intent.analyze": [PLAN],
             "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "talk"}]}
    normal = {"sub_speak.compose": ["First, list the goals."]}
    recorder = TraceRecorder(PERSONA, "meta_intent", "Plan my week.", "p-steer", [])
    with runtime(store, tmp_path, light, normal) as made:
        events: list[Event] = list(made.stream_pulse(PERSONA, "meta_intent", "Plan my week.",
                                                     pulse_id="p-steer"))
    for event in events:
        recorder.observe(event)
    calls = {entry.node: entry for entry in recorder.trace({}).llm_calls}
    compose, decide = calls["compose"], calls["decide"]
    assert (compose.pattern, compose.intent_pattern, compose.model) == (
        "base_main_specialized", "base_main_specialized", "normal")
    # a plan request implies PLANNING: with no active plan, the guidelines are the intent's
    assert compose.stage == "PLANNING"
    assert {"part": "specialized", "detail": "PLANNING (intent)"}.items() <= next(
        part for part in compose.context if part["part"] == "specialized").items()
    assert "Stage: PLANNING." in compose.messages[0].content
    assert (decide.pattern, decide.intent_pattern) == ("base_main", None)  # the router's own
    stored = {r.node: r for r in store.call_records(PERSONA.id) if r.kind == "model"}
    assert stored["compose"].pattern == "base_main_specialized"
    assert stored["decide"].pattern == "base_main"
