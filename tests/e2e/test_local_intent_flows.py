"""Seed 003 flows 3 and 4 on the bundled local model (needs the `local` extra): the pattern the
local model's intent chose steers the local model's next call in a called playbook, and a
simple file question is answered by the tool the intent names, with the local model speaking
from its result and no model planning the call."""

from __future__ import annotations

import json
from pathlib import Path

from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import LLMCalled, ToolCalled
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.e2e.conftest import LOCAL_MODEL, PERSONA, contents
from tests.e2e.test_intent_steering import INNER, OUTER

pytestmark = LOCAL_MODEL


def test_the_local_models_intent_steers_its_next_call(tmp_path: Path) -> None:
    from sea.chat.providers import resolve_model

    folder = tmp_path / "playbooks"
    folder.mkdir()
    for playbook in (OUTER, INNER):
        (folder / f"{playbook['name']}.json").write_text(json.dumps(playbook), "utf-8")
    store = SQLiteStore(tmp_path / "memory.sqlite")
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(resolve_model("local")),
                                    library=PlaybookLibrary.bundled([folder]),
                                    checkpoint_path=tmp_path / "checkpoints.sqlite"))
    try:
        result = runtime.run_pulse(PERSONA, "steered", "Make a plan for my week.")
    finally:
        runtime.close()
    assert result.status == "ok", result.error
    analyze, answer = result.llm_calls
    assert analyze.node == "analyze" and analyze.outcome == "ok"
    chosen = analyze.response
    assert chosen["action_type"] == "plan_generation"  # the local model read the request
    assert answer.node == "answer" and answer.outcome == "ok"
    assert answer.model == "smollm2-135m-instruct" and isinstance(answer.response, str)
    # the rule gave a pattern with Main, which the node takes in place of its worker profile
    # (base_specialized): the local model's second call sees the conversation
    assert answer.intent_pattern in ("base_main", "base_main_specialized")
    assert answer.pattern == answer.intent_pattern
    assert "Make a plan for my week." in contents(answer.messages)
    store.close()


def test_the_local_model_answers_a_file_question_from_a_tool_no_model_chose(
    tmp_path: Path
) -> None:
    from sea.chat.providers import resolve_model

    workspace = tmp_path / "workspace"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "todo.md").write_text("- buy milk\n", "utf-8")
    intent = {"action_type": "file_operation", "complexity": "simple", "confidence": 0.95,
              "reasoning": "asks whether a file is there", "file_target": "notes/todo.md",
              "tool_operations": [{"operation": "exists"}]}
    light = ScriptedChatModel(model_name="light", responses={"sub_intent.analyze": [intent]})
    store = SQLiteStore(tmp_path / "memory.sqlite")
    runtime = Runtime(RuntimeConfig(store, ModelSet(normal=resolve_model("local"),
                                                    lightweight=light),
                                    library=PlaybookLibrary.bundled(), workspace=workspace,
                                    checkpoint_path=tmp_path / "checkpoints.sqlite"))
    try:
        events = list(runtime.stream_pulse(  # a phrasing spot_file_question leaves to the intent
            PERSONA, "meta_intent", "Is notes/todo.md around, by any chance?"))
    finally:
        runtime.close()
    calls = [e.record for e in events if isinstance(e, LLMCalled)]
    assert [(c.playbook, c.node, c.model) for c in calls] == [
        ("sub_intent", "analyze", "light"),
        ("sub_speak", "compose", "smollm2-135m-instruct")]  # nothing planned the tool call
    (used,) = [e for e in events if isinstance(e, ToolCalled)
               and e.tool not in ("judge_intent", "spot_file_question")]
    assert (used.tool, used.args, used.result["exists"]) == (
        "file_exists", {"path": "notes/todo.md"}, True)
    speaker = calls[1]
    assert speaker.outcome == "ok" and isinstance(speaker.response, str) and speaker.response
    assert '"exists":true' in contents(speaker.messages)  # it spoke from the tool's result
    store.close()


def test_the_local_model_is_not_asked_before_answering_a_simple_file_question(
    tmp_path: Path
) -> None:
    """With the bundled model alone (its intent would name many operations), a simple file
    question in English or Japanese is still answered by the one call it asks, and the model
    only speaks."""
    from sea.chat.providers import resolve_model

    workspace = tmp_path / "workspace"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "todo.md").write_text("- buy milk\n", "utf-8")
    store = SQLiteStore(tmp_path / "memory.sqlite")
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(resolve_model("local")),
                                    library=PlaybookLibrary.bundled(), workspace=workspace,
                                    checkpoint_path=tmp_path / "checkpoints.sqlite"))
    asked = {"Is there a notes/todo.md?": ("file_exists", {"path": "notes/todo.md"}),
             "notesフォルダの中身を見せて": ("list_files", {"path": "notes"})}
    try:
        pulses = {text: list(runtime.stream_pulse(PERSONA, "meta_intent", text))
                  for text in asked}
    finally:
        runtime.close()
    for text, (tool, args) in asked.items():
        calls = [e.record for e in pulses[text] if isinstance(e, LLMCalled)]
        assert [(c.playbook, c.node) for c in calls] == [("sub_speak", "compose")], text
        used = [e for e in pulses[text] if isinstance(e, ToolCalled)
                and e.tool in ("file_exists", "list_files")]
        assert [(e.tool, e.args) for e in used] == [(tool, args)], text
        speaker = calls[0]
        assert speaker.outcome == "ok", text
        assert f"[tool {tool}(" in contents(speaker.messages), text  # it spoke from the result
        # what SmolLM2-135M says is its own: greedy decoding on one CPU build answered the
        # English question with nothing; an empty answer is then said, never silent
        assert speaker.response or "the model returned an empty answer" in speaker.warnings, text
    store.close()
