"""Seed 000 §3–4 with the scripted model and the real plan tools: a new plan has no step yet
(``first_step_id`` null, not a step id that fails later), and a ``step_id`` ref to a result
that carries only a plan id looks the step up through the plan tool (``plan_get_state``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import ActionEnded, ToolCalled
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.e2e.conftest import PERSONA

STEPS = {
    "name": "steps",
    "description": "Plans with the plan tools and reads a step.",
    "output_schema": ["outcomes"],
    "start_node": "act",
    "nodes": [
        {"id": "act", "type": "actions", "action": "Do what the user asked: {input}",
         "available_tools": ["plan_propose", "plan_set_action_specs", "plan_get_step"],
         "output_key": "outcomes"},
    ],
}
PROPOSE = {"action_id": "plan", "tool": "plan_propose",
           "parameters": {"title": "Core engine", "content": "Start with the core engine."}}
SPECS = {"action_id": "specs", "tool": "plan_set_action_specs",
         "parameters": {"plan_id": "ref:plan",
                        "specs": [{"kind": "mkdir", "path": "engine"}]}}
STEP = {"action_id": "step", "tool": "plan_get_step", "parameters": {"step_id": "ref:plan"}}


def run(store: SQLiteStore, tmp_path: Path, actions: list[dict[str, Any]]) -> list[Any]:
    books, workspace = tmp_path / "books", tmp_path / "ws"
    books.mkdir()
    workspace.mkdir()
    (books / "steps.json").write_text(json.dumps(STEPS), encoding="utf-8")
    model = ScriptedChatModel(responses={"steps.act": [{"actions": actions, "reason": "go"}]})
    config = RuntimeConfig(store, ModelSet.single(model), workspace=workspace,
                           library=PlaybookLibrary.bundled([books]),
                           checkpoint_path=tmp_path / "checkpoints.sqlite")
    with Runtime(config) as runtime:
        return list(runtime.stream_pulse(PERSONA, "steps", "Start with the core engine."))


def test_a_step_id_ref_to_a_proposal_looks_the_step_up_through_the_plan_tool(
    store: SQLiteStore, tmp_path: Path
) -> None:
    events = run(store, tmp_path, [PROPOSE, SPECS, STEP])
    calls = [e for e in events if isinstance(e, ToolCalled)]
    proposed = calls[0].result
    plan_id = proposed["plan_id"]
    assert proposed["first_step_id"] is None  # no step yet, not a guess
    assert [(c.tool, c.action_id) for c in calls] == [
        ("plan_propose", "plan"), ("plan_set_action_specs", "specs"),
        ("plan_get_state", "step"), ("plan_get_step", "step")]  # the look-up, then the call
    assert calls[2].args == {"plan_id": plan_id}
    assert calls[3].args == {"step_id": f"{plan_id}:1"}
    assert calls[3].result["spec"]["base"] == {
        "kind": "mkdir", "path": "engine", "content": None, "description": "",
        "optional": False}


def test_a_step_id_ref_to_a_plan_without_specs_fails_the_action_saying_so(
    store: SQLiteStore, tmp_path: Path
) -> None:
    events = run(store, tmp_path, [PROPOSE, STEP])
    calls = [e for e in events if isinstance(e, ToolCalled)]
    assert [c.tool for c in calls] == ["plan_propose", "plan_get_state"]  # no plan_get_step
    ended = {e.action_id: e for e in events if isinstance(e, ActionEnded)}
    assert (ended["plan"].status, ended["step"].status) == ("ok", "failed")
    assert ended["step"].error is not None
    message = ended["step"].error["message"]
    assert message.startswith("action 'step': tool 'plan_get_step': argument 'step_id'")
    assert "has none of step_id, first_step_id" in message
    assert "plan_get_state of its plan_id" in message and "no step yet" in message
