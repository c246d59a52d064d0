"""Action pipelines end to end with the scripted model: the design notes' scenarios A-D and
their failures, through the bundled ``sub_act`` and a pipeline playbook with host tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.limits import Limits
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.e2e.conftest import PERSONA, contents, request_of

GAME_DOC = "# Star Garden\nA farming game on a space station. You grow plants for the crew.\n"

received: dict[str, list[Any]] = {}


class _Respond(BaseModel):
    action_results: list[dict[str, Any]] = Field(description="Results to answer from.")
    user_input: str = Field(default="", description="What the user asked.")


class _Draft(BaseModel):
    prompt_override: str = Field(max_length=400, description="The text to draft from.")


class _Propose(BaseModel):
    goal: str = Field(description="What the plan should achieve.")


class _Tasks(BaseModel):
    step_id: str = Field(
        description="The plan step to break into tasks.",
        json_schema_extra={"x-sea-ref": ["step_id", "first_step_id"]},
    )


def _respond(action_results: list[dict[str, Any]], user_input: str = "") -> dict[str, Any]:
    received.setdefault("respond", []).append(action_results)
    return {"response": f"answered from {len(action_results)} result(s)"}


def _draft(prompt_override: str) -> str:
    received.setdefault("draft", []).append(prompt_override)
    return f"draft of {len(prompt_override)} characters"


def _propose(goal: str) -> dict[str, Any]:
    return {"plan_id": "plan-1", "first_step_id": "plan-1:1", "steps": [goal]}


def _tasks(step_id: str) -> list[str]:
    received.setdefault("tasks", []).append(step_id)
    if step_id != "plan-1:1":
        raise ValueError(f"step not found: {step_id}")
    return ["set up the project", "write the core loop"]


HOST_TOOLS: list[BaseTool] = [
    StructuredTool.from_function(_respond, name="respond", args_schema=_Respond,
                                 description="Answer the user from earlier results."),
    StructuredTool.from_function(_draft, name="draft", args_schema=_Draft,
                                 description="Draft a text from a prompt."),
    StructuredTool.from_function(_propose, name="plan_propose", args_schema=_Propose,
                                 description="Propose a plan; returns its first step id."),
    StructuredTool.from_function(_tasks, name="task_list", args_schema=_Tasks,
                                 description="Break a plan step into tasks."),
]

PIPELINE = {
    "name": "pipeline",
    "description": "Plans tool calls and hands the outcomes to the speaker.",
    "output_schema": ["outcomes"],
    "start_node": "act",
    "nodes": [
        {"id": "act", "type": "actions", "action": "Do what the user asked: {input}",
         "available_tools": ["read_file", "respond", "draft", "plan_propose", "task_list"],
         "output_key": "outcomes", "error_next": "failed", "next": "memo"},
        {"id": "memo", "type": "memorize", "role": "user",
         "action": "<system>Outcomes: {outcomes}</system>", "next": "speak"},
        {"id": "failed", "type": "memorize", "role": "user",
         "action": "<system>Planning failed: {error.message}</system>", "next": "speak"},
        {"id": "speak", "type": "subplay", "playbook": "sub_speak"},
    ],
}


def plan(*actions: tuple[str, str, dict[str, Any]], reason: str = "to answer") -> dict[str, Any]:
    return {"actions": [{"action_id": a, "tool": t, "parameters": p} for a, t, p in actions],
            "reason": reason}


READ = ("read_doc", "read_file", {"path": "game_doc.md"})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "game_doc.md").write_text(GAME_DOC, encoding="utf-8")
    (tmp_path / "secret.txt").write_text("the outside secret", encoding="utf-8")
    received.clear()
    return root


@pytest.fixture
def make(store: SQLiteStore, tmp_path: Path, workspace: Path) -> Iterator[Any]:
    made: list[Runtime] = []
    books = tmp_path / "books"
    books.mkdir()
    (books / "pipeline.json").write_text(json.dumps(PIPELINE), encoding="utf-8")

    def build(responses: dict[str, list[Any]], *, limits: Limits | None = None,
              with_workspace: bool = True) -> Runtime:
        model = ScriptedChatModel(responses=responses)
        runtime = Runtime(RuntimeConfig(
            store, ModelSet.single(model), tools=HOST_TOOLS,
            library=PlaybookLibrary.bundled([books]),
            checkpoint_path=tmp_path / "checkpoints.sqlite", limits=limits,
            workspace=workspace if with_workspace else None,
        ))
        made.append(runtime)
        return runtime

    yield build
    for runtime in made:
        runtime.close()


def outcomes_of(result: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = result.outputs["outcomes"]
    return found


def test_a_action_results_ref_receives_a_list_holding_the_file_result(make: Any) -> None:
    runtime = make({
        "pipeline.act": [plan(READ, ("answer", "respond", {"action_results": "ref:read_doc",
                                                           "user_input": "what is it?"}))],
        "sub_speak.compose": ["It is a farming game on a space station."],
    })
    result = runtime.run_pulse(PERSONA, "pipeline", "Read game_doc.md and tell me what it is")
    assert result.status == "ok", result.error
    outcomes = outcomes_of(result)
    assert [(o["action_id"], o["status"]) for o in outcomes] == [("read_doc", "ok"),
                                                                  ("answer", "ok")]
    (given,) = received["respond"]
    assert isinstance(given, list) and len(given) == 1 and given[0]["content"] == GAME_DOC
    assert outcomes[1]["normalized"] == [{"parameter": "action_results", "rule": "array.wrap",
                                          "from_type": "object", "to_type": "array"}]
    kinds = [e.kind for e in result.events]
    assert kinds.count("action_start") == 2 and kinds.count("action_end") == 2
    assert kinds.index("actions_planned") < kinds.index("action_start")
    resolved = [e for e in result.events if e.kind == "ref_resolved"]
    assert [(e.action_id, e.parameter, e.ref, e.rule) for e in resolved] == [
        ("answer", "action_results", "read_doc", "array.wrap")]
    calls = [(e.tool, e.action_id) for e in result.events if e.kind == "tool_call"]
    assert calls == [("read_file", "read_doc"), ("respond", "answer")]
    assert result.spoken == ["It is a farming game on a space station."]
    memo = contents(request_of(result, "sub_speak", "compose"))
    assert "answered from 1 result(s)" in memo


def test_b_prompt_override_ref_receives_the_file_text(make: Any) -> None:
    runtime = make({
        "pipeline.act": [plan(READ, ("write", "draft", {"prompt_override": "ref:read_doc"}))],
        "sub_speak.compose": ["Drafted."],
    })
    result = runtime.run_pulse(PERSONA, "pipeline", "Draft a plan from the document")
    assert result.status == "ok", result.error
    assert received["draft"] == [GAME_DOC]
    tool_args = [e.args for e in result.events if e.kind == "tool_call" and e.tool == "draft"]
    assert tool_args == [{"prompt_override": GAME_DOC}]  # as the tool received it
    assert outcomes_of(result)[1]["normalized"][0]["rule"] == "string.content"


def test_b_long_text_is_cut_to_the_parameter_limit_with_a_note(
    make: Any, workspace: Path
) -> None:
    (workspace / "game_doc.md").write_text("x" * 1000, encoding="utf-8")
    runtime = make({
        "pipeline.act": [plan(READ, ("write", "draft", {"prompt_override": "ref:read_doc"}))],
        "sub_speak.compose": ["Drafted."],
    })
    result = runtime.run_pulse(PERSONA, "pipeline", "Draft")
    (text,) = received["draft"]
    assert len(text) <= 400 and "truncated" in text and "of 1000 characters" in text
    record = outcomes_of(result)[1]["normalized"][0]
    assert record["rule"] == "string.truncated" and "1000" in record["detail"]


def test_c_step_id_ref_takes_the_first_step_id_of_a_plan_result(make: Any) -> None:
    runtime = make({
        "pipeline.act": [plan(("plan", "plan_propose", {"goal": "core engine"}),
                              ("tasks", "task_list", {"step_id": "ref:plan"}))],
        "sub_speak.compose": ["Here are the tasks."],
    })
    result = runtime.run_pulse(PERSONA, "pipeline", "Start with the core engine")
    assert result.status == "ok", result.error
    assert received["tasks"] == ["plan-1:1"]
    outcome = outcomes_of(result)[1]
    assert outcome["status"] == "ok" and outcome["result"] == ["set up the project",
                                                               "write the core loop"]
    assert outcome["normalized"][0]["rule"] == "id.key"
    assert "first_step_id" in outcome["normalized"][0]["detail"]


def test_the_prompt_names_exactly_the_offered_tools(make: Any) -> None:
    runtime = make({"pipeline.act": [plan()], "sub_speak.compose": ["Nothing to do."]})
    result = runtime.run_pulse(PERSONA, "pipeline", "Hi")
    assert result.status == "ok", result.error
    prompt = request_of(result, "pipeline", "act")[-1]["content"]
    offered = {"read_file", "respond", "draft", "plan_propose", "task_list"}
    listed = {line[2:].split(":")[0] for line in prompt.splitlines() if line.startswith("- ")
              and ":" in line and " " not in line[2:].split(":")[0]}
    assert listed == offered
    for absent in ("memory_search", "memory_recent", "list_files", "search_files",
                   "list_available_playbooks"):
        assert absent not in prompt
    assert "ref:<action_id>" in prompt and "EARLIER" in prompt
    assert outcomes_of(result) == []


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (plan(("answer", "respond", {"action_results": "ref:read_doc"}), READ),
         "refers to 'read_doc', which comes after it"),
        (plan(READ, ("answer", "respond", {"action_results": "ref:nowhere"})),
         "refers to 'nowhere', which is no action's id"),
        (plan(("answer", "respond", {"action_results": "ref:answer"})),
         "refers to its own action"),
        (plan(READ, READ), "action_id 'read_doc' is used twice"),
        (plan(("x", "delete_file", {"path": "a"})), "names tool \"delete_file\", which is not"),
        (plan(("w", "draft", {"text": "a"})), "tool 'draft' has no parameter 'text'"),
    ],
)
def test_a_bad_plan_is_sent_back_saying_exactly_what_is_wrong(
    make: Any, bad: dict[str, Any], words: str
) -> None:
    good = plan(READ)
    runtime = make({"pipeline.act": [bad, good], "sub_speak.compose": ["Done."]})
    result = runtime.run_pulse(PERSONA, "pipeline", "Read it")
    assert result.status == "ok", result.error
    (call,) = [c for c in result.llm_calls if c.node == "act"]
    assert call.retries == 1
    retry = call.messages[-1]["content"]
    assert words in retry, retry
    assert [o["action_id"] for o in outcomes_of(result)] == ["read_doc"]


def test_a_plan_that_stays_bad_fails_the_node_and_the_speaker_is_told(make: Any) -> None:
    forward = plan(("answer", "respond", {"action_results": "ref:read_doc"}), READ)
    runtime = make({"pipeline.act": [forward] * 3, "sub_speak.compose": ["Sorry."]})
    result = runtime.run_pulse(PERSONA, "pipeline", "Read it")
    assert result.status == "ok", result.error
    assert [e["node"] for e in result.handled_errors] == ["act"]
    told = contents(request_of(result, "sub_speak", "compose"))
    assert "Planning failed" in told and "comes after it" in told
    assert "respond" not in received  # nothing ran


def test_too_many_actions_are_refused(make: Any) -> None:
    many = plan(*[(f"r{i}", "read_file", {"path": "game_doc.md"}) for i in range(9)])
    runtime = make({"pipeline.act": [many, plan(READ)], "sub_speak.compose": ["Done."]})
    result = runtime.run_pulse(PERSONA, "pipeline", "Read it all")
    (call,) = [c for c in result.llm_calls if c.node == "act"]
    assert "the plan has 9 actions; at most 8 are allowed" in call.messages[-1]["content"]


def _failure_case(make: Any, actions: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
    runtime = make({"pipeline.act": [actions], "sub_speak.compose": ["Something failed."]})
    result = runtime.run_pulse(PERSONA, "pipeline", "Do it")
    assert result.status == "ok", result.error  # a failed action is an outcome
    assert result.handled_errors == []
    return result, outcomes_of(result)


def test_a_path_outside_the_workspace_fails_its_action_and_skips_the_rest(make: Any) -> None:
    result, outcomes = _failure_case(make, plan(
        ("steal", "read_file", {"path": "../secret.txt"}),
        ("answer", "respond", {"action_results": "ref:steal"}),
    ))
    assert [o["status"] for o in outcomes] == ["failed", "skipped"]
    assert outcomes[0]["error"]["code"] == "SEA532"
    assert "leaves the workspace" in outcomes[0]["error"]["message"]
    assert "action 'steal'" in outcomes[0]["error"]["message"]
    assert outcomes[1]["error"]["message"] == "not run: action 'steal' before it failed"
    assert "respond" not in received
    told = contents(request_of(result, "sub_speak", "compose"))
    assert "leaves the workspace" in told and "the outside secret" not in told


def test_a_raising_tool_fails_its_action(make: Any) -> None:
    _, outcomes = _failure_case(make, plan(
        ("tasks", "task_list", {"step_id": "nope"}),
        READ,
    ))
    assert [o["status"] for o in outcomes] == ["failed", "skipped"]
    assert "step not found: nope" in outcomes[0]["error"]["message"]


def test_a_result_that_cannot_become_the_expected_type_fails_the_action(make: Any) -> None:
    _, outcomes = _failure_case(make, plan(
        ("plan", "plan_propose", {"goal": "x"}),
        ("read", "read_file", {"path": "game_doc.md", "offset": "ref:plan"}),
        ("answer", "respond", {"action_results": "ref:read"}),
    ))
    assert [o["status"] for o in outcomes] == ["ok", "failed", "skipped"]
    message = outcomes[1]["error"]["message"]
    assert "'offset'" in message and "ref:plan" in message and "object" in message


def test_a_ref_to_a_failed_action_is_skipped_not_resolved(make: Any) -> None:
    _, outcomes = _failure_case(make, plan(
        ("missing", "read_file", {"path": "nothing_here.md"}),
        ("answer", "respond", {"action_results": "ref:missing"}),
    ))
    assert [o["status"] for o in outcomes] == ["failed", "skipped"]
    assert "no such file" in outcomes[0]["error"]["message"]


def test_without_a_workspace_the_workspace_tools_and_sub_act_are_absent(make: Any) -> None:
    runtime = make({"sub_router_user.decide": [{"playbook": "basic_chat", "reason": "hi"}],
                    "sub_speak.compose": ["Hi!"]}, with_workspace=False)
    result = runtime.run_pulse(PERSONA, "meta_user", "Hello")
    offered = [e.result for e in result.events
               if e.kind == "tool_call" and e.tool == "rank_playbooks"]
    names = set(offered[0]["scores"])  # every playbook the prior ranked
    assert "sub_act" not in names and "memory_recall" in names
    with_ws = make({"sub_router_user.decide": [{"playbook": "basic_chat", "reason": "hi"}],
                    "sub_speak.compose": ["Hi!"]})
    again = with_ws.run_pulse(PERSONA, "meta_user", "Hello")
    offered = [e.result for e in again.events
               if e.kind == "tool_call" and e.tool == "rank_playbooks"]
    assert "sub_act" in set(offered[0]["scores"])


def test_a_plan_needing_approval_is_shown_once_and_a_resume_runs_that_plan(
    make: Any,
) -> None:
    limits = Limits(approval_tools=frozenset({"respond"}))
    first = make({"pipeline.act": [plan(READ, ("answer", "respond",
                                               {"action_results": "ref:read_doc"}))]},
                 limits=limits)
    waiting = first.run_pulse(PERSONA, "pipeline", "Read and answer")
    assert waiting.status == "waiting", waiting.error
    assert waiting.approval is not None and waiting.approval["tools"] == ["respond"]
    assert [a["action_id"] for a in waiting.approval["plan"]["actions"]] == ["read_doc",
                                                                             "answer"]
    assert "respond" not in received and not [e for e in waiting.events
                                              if e.kind == "tool_call"]
    # another runtime, whose model has no plan left to give: the shown plan runs
    second = make({"sub_speak.compose": ["Answered."]}, limits=limits)
    done = second.run_resume(waiting.pulse_id, True)
    assert done.status == "ok", done.error
    assert [c.node for c in done.llm_calls] == ["compose"]
    assert [o["status"] for o in outcomes_of(done)] == ["ok", "ok"]
    assert len(received["respond"]) == 1


def test_a_denied_plan_runs_nothing(make: Any) -> None:
    limits = Limits(approval_tools=frozenset({"respond"}))
    first = make({"pipeline.act": [plan(READ, ("answer", "respond",
                                               {"action_results": "ref:read_doc"}))]},
                 limits=limits)
    waiting = first.run_pulse(PERSONA, "pipeline", "Read and answer")
    second = make({"sub_speak.compose": ["I did not do it."]}, limits=limits)
    done = second.run_resume(waiting.pulse_id, False)
    assert done.status == "ok", done.error
    assert [e["code"] for e in done.handled_errors] == ["SEA575"]
    assert not [e for e in done.events if e.kind == "tool_call"]


ROUTE_ACT = {"playbook": "sub_act", "reason": "needs a file"}


def test_d_three_turns_through_sub_act_keep_the_whole_conversation(
    make: Any, store: SQLiteStore
) -> None:
    runtime = make({
        # "Sounds fun!" matches no playbook: the router takes basic_chat without the model
        "sub_router_user.decide": [ROUTE_ACT, ROUTE_ACT],
        "sub_act.act": [
            plan(READ),
            plan(("steal", "read_file", {"path": "/etc/passwd"})),
        ],
        "sub_speak.compose": ["It is a farming game.", "Glad you like it!",
                              "I could not read that file."],
    })
    turns = ["Look at game_doc.md in my files and tell me what it is about", "Sounds fun!",
             "Now look at /etc/passwd in my files"]
    results = [runtime.run_pulse(PERSONA, "meta_user", text) for text in turns]
    for result in results:
        assert result.status == "ok", result.error
    first, _, third = results
    memo = [w for w in first.memory_writes if w.playbook == "sub_act"]
    assert len(memo) == 1 and memo[0].role == "user" and memo[0].content.startswith("<system>")
    assert "conversation" not in memo[0].tags and "space station" in memo[0].content
    assert memo[0].content in contents(request_of(first, "sub_speak", "compose"))
    failed = [w for w in third.memory_writes if w.playbook == "sub_act"]
    assert "absolute" in failed[0].content or "leaves the workspace" in failed[0].content
    conversation = [m.content for m in store.recent(PERSONA.id, limit=50)
                    if "conversation" in m.tags]
    assert conversation == [turns[0], "It is a farming game.", turns[1], "Glad you like it!",
                            turns[2], "I could not read that file."]
    seen = contents(request_of(third, "sub_speak", "compose"))
    assert turns[0] in seen and "Glad you like it!" in seen
    assert memo[0].content not in seen  # a memo of an earlier pulse stays there
