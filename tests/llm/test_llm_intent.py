"""Intent analysis: seed 003's selection rule as one function, the decision on an intent
(pattern, approval, asking back below the host's threshold), and the bundled sub_intent
playbook's schema."""

from __future__ import annotations

import json

import pytest

from sea.errors import UsageError
from sea.llm.intent import (
    ACTION_TYPES,
    INTENT_SCHEMA,
    IntentPolicy,
    direct_file_call,
    intent_stage,
    judge_intent,
    select_prompt_pattern,
)
from sea.resources import bundled_playbooks_dir


@pytest.mark.parametrize(
    ("action_type", "complexity", "confidence", "pattern"),
    [
        ("summary_generation", "simple", 0.95, "base_specialized"),
        ("plan_generation", "simple", 0.95, "base_specialized"),  # the first rule wins
        ("summary_generation", "simple", 0.9, "base_main"),  # "> 0.9", not ">="
        ("plan_generation", "simple", 0.5, "base_main_specialized"),
        ("code_execution", "moderate", 0.99, "base_main_specialized"),
        ("direct_response", "complex", 0.99, "base_main_specialized"),
        ("file_operation", "moderate", 0.99, "base_main"),
        ("direct_response", "simple", 0.3, "base_main"),
        ("content_extraction", "moderate", 0.2, "base_main"),
    ],
)
def test_the_seed_selection_rule(
    action_type: str, complexity: str, confidence: float, pattern: str
) -> None:
    assert select_prompt_pattern(action_type, complexity, confidence) == pattern


def test_judging_an_intent_fills_the_seed_record() -> None:
    policy = IntentPolicy(clarify_below=0.6)
    judged = judge_intent({
        "action_type": "file_operation", "complexity": "simple", "confidence": 0.97,
        "reasoning": "wants notes.md removed", "prompt_pattern": "base_main",
        "tool_operations": [{"operation": "delete", "args": {"file_target": "notes.md"}}],
        "file_target": "notes.md",
    }, policy)
    assert judged == {
        "action_type": "file_operation",
        "prompt_pattern": "base_specialized",  # the rule's, not the model's guess
        "tool_operations": [{"operation": "delete", "args": {"file_target": "notes.md"}}],
        "file_target": "notes.md",
        "require_approval": True,  # a delete always needs a person
        "confidence": 0.97,
        "reasoning": "wants notes.md removed",
        "specialized_domain": None,
        "complexity": "simple",
        "clarify": False,
        "threshold": 0.6,
        "file_call": None,  # a delete is no simple question
        "stage": None,  # a file operation without a domain implies no stage
    }


@pytest.mark.parametrize(("confidence", "clarify"), [(0.59, True), (0.6, False), (None, True),
                                                     ("high", True), (float("nan"), True)])
def test_below_the_threshold_the_pulse_asks_back(confidence: object, clarify: bool) -> None:
    judged = judge_intent({"action_type": "direct_response", "confidence": confidence},
                          IntentPolicy(clarify_below=0.6))
    assert judged["clarify"] is clarify


def test_the_threshold_is_a_share() -> None:
    with pytest.raises(UsageError):
        IntentPolicy(clarify_below=1.5)


def test_sub_intent_asks_for_the_seed_schema_and_returns_the_seed_fields() -> None:
    document = json.loads((bundled_playbooks_dir() / "sub_intent.json").read_text("utf-8"))
    analyze = next(node for node in document["nodes"] if node["id"] == "analyze")
    assert analyze["response_schema"] == INTENT_SCHEMA
    assert INTENT_SCHEMA["properties"]["action_type"]["enum"] == list(ACTION_TYPES)
    seed_fields = {"action_type", "prompt_pattern", "tool_operations", "file_target",
                   "require_approval", "confidence", "reasoning", "specialized_domain"}
    assert seed_fields <= set(INTENT_SCHEMA["properties"])
    assert seed_fields | {"clarify", "intent", "file_call", "intent_stage"} == set(
        document["output_schema"])


@pytest.mark.parametrize(
    ("operations", "target", "call"),
    [
        ([{"operation": "exists", "args": {"file_target": "notes/todo.md"}}], None,
         ("file_exists", "notes/todo.md")),
        ([{"operation": "exists"}], "notes/todo.md", ("file_exists", "notes/todo.md")),
        ([{"operation": "exists", "args": {"path": " a.md "}}], "b.md", ("file_exists", "a.md")),
        ([{"operation": "list", "args": {}}], "notes", ("list_files", "notes")),
        ([{"operation": "list"}], None, ("list_files", ".")),
        ([{"operation": "exists"}], None, None),  # nothing to look for
        ([{"operation": "read", "args": {"file_target": "a.md"}}], "a.md", None),
        ([{"operation": "list"}, {"operation": "read"}], "notes", None),  # not simple
        ([], "notes", None),
    ],
)
def test_a_simple_file_question_gets_its_tool_call_from_the_intent_alone(
    operations: list[dict[str, object]], target: str | None, call: tuple[str, str] | None
) -> None:
    intent = {"action_type": "file_operation", "confidence": 0.9, "tool_operations": operations,
              "file_target": target}
    found = judge_intent(intent, IntentPolicy())["file_call"]
    assert (None if found is None else (found["name"], found["args"]["path"])) == call
    assert direct_file_call(intent) == found


def test_an_unsure_intent_gets_no_file_call() -> None:
    intent = {"confidence": 0.2, "tool_operations": [{"operation": "list"}]}
    assert judge_intent(intent, IntentPolicy())["file_call"] is None
    assert direct_file_call(intent) is not None


@pytest.mark.parametrize(
    ("action_type", "domain", "stage"),
    [
        ("plan_generation", "review", "PLANNING"),  # the action type first
        ("code_execution", None, "EXECUTION"),
        ("summary_generation", None, "SUMMARY"),
        ("content_extraction", "planning", "EXTRACTION"),
        ("direct_response", "code_review", "REVIEW"),
        ("file_operation", "execution", "EXECUTION"),
        ("direct_response", "file_analysis", None),
        ("direct_response", None, None),
    ],
)
def test_the_stage_an_intent_implies(action_type: str, domain: str | None,
                                     stage: str | None) -> None:
    assert intent_stage(action_type, domain) == stage
    judged = judge_intent({"action_type": action_type, "specialized_domain": domain,
                           "confidence": 0.8}, IntentPolicy())
    assert judged["stage"] == stage
