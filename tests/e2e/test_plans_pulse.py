"""Plans end to end with the scripted model, through the bundled ``meta_user`` → ``sub_plan``:
propose → specs → preview → approval (a person, in a later runtime; or the host policy) →
execute → a memo for the speaker; a partial selection, a refusal, the go-ahead guard, plan
memory in the prompts across runtimes, and the plan tools from ``tool_call`` and ``actions``
nodes (a resumed pipeline repeats neither the model call nor an earlier action)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.plans import PlanPolicy, PlanService
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.e2e.conftest import PERSONA, contents, request_of

TASK = "Write the outline of my game into notes/outline.md"
OUTLINE = "# Star Garden\n1. Arrive on the station\n2. Grow the first crop\n"
DRAFT = {
    "title": "Game outline",
    "content": "Make a notes folder and write the outline there.",
    "specs": [
        {"kind": "mkdir", "path": "notes", "description": "a folder for notes"},
        {"kind": "create", "path": "notes/outline.md", "content": OUTLINE,
         "description": "the outline"},
    ],
}
TO_PLAN = {"playbook": "sub_plan", "reason": "changes a file"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


class Make:
    """Runtimes over one store, workspace and checkpoint file (a later runtime stands for
    another process)."""

    def __init__(self, store: SQLiteStore, workspace: Path, tmp_path: Path,
                 books: Path) -> None:
        self.store, self.workspace, self.tmp_path, self.books = store, workspace, tmp_path, books
        self.made: list[Runtime] = []
        self.models: list[ScriptedChatModel] = []

    def __call__(self, responses: dict[str, list[Any]], *, policy: PlanPolicy | None = None,
                 workspace: bool = True) -> Runtime:
        model = ScriptedChatModel(responses=responses)
        runtime = Runtime(RuntimeConfig(
            self.store, ModelSet(normal=model, lightweight=model),
            library=PlaybookLibrary.bundled([self.books]),
            checkpoint_path=self.tmp_path / "checkpoints.sqlite",
            workspace=self.workspace if workspace else None, plan_policy=policy,
        ))
        self.made.append(runtime)
        self.models.append(model)
        return runtime


@pytest.fixture
def make(store: SQLiteStore, workspace: Path, tmp_path: Path) -> Iterator[Make]:
    books = tmp_path / "books"
    books.mkdir()
    maker = Make(store, workspace, tmp_path, books)
    yield maker
    for runtime in maker.made:
        runtime.close()


def script(*, speak: str = "Done.", step: str = "new", **extra: list[Any]) -> dict[str, Any]:
    return {"sub_router_user.decide": [TO_PLAN], "sub_plan.decide": [{"step": step}],
            "sub_plan.draft": [DRAFT], "sub_speak.compose": [speak], **extra}


def plan_events(result: PulseResult) -> list[str]:
    return [e.event for e in result.events if e.kind == "plan_event"]  # type: ignore[attr-defined]


def memo_of(result: PulseResult) -> str:
    (memo,) = [w for w in result.memory_writes if w.playbook == "sub_plan"]
    assert memo.role == "user" and memo.content.startswith("<system>")
    assert "conversation" not in memo.tags and "playbook_result" in memo.tags
    return memo.content


def test_propose_approve_execute_end_to_end_across_two_runtimes(
    make: Make, store: SQLiteStore, workspace: Path
) -> None:
    first = make(script())
    waiting = first.run_pulse(PERSONA, "meta_user", TASK)
    assert waiting.status == "waiting", waiting.error
    assert plan_events(waiting) == ["plan_proposed", "specs_set", "approval_requested"]
    shown = waiting.approval
    assert shown is not None and (shown["playbook"], shown["node"]) == ("sub_plan", "ask")
    view = shown["plan_approval"]
    assert view["title"] == "Game outline" and view["files"] == ["notes", "notes/outline.md"]
    assert [(s["id"], s["kind"], s["risk"]) for s in view["specs"]] == [
        ("1", "mkdir", "low"), ("2", "create", "low")]
    assert view["specs"][1]["diff_summary"].startswith("new file, 3 lines")
    assert not (workspace / "notes").exists()  # nothing runs before the approval
    assert waiting.spoken == []

    second = make({"sub_speak.compose": ["I wrote the outline."]})  # no plan left to make
    done = second.run_resume(waiting.pulse_id, {"all": True, "approver": "ken"})
    assert done.status == "ok", done.error
    assert [c.node for c in done.llm_calls] == ["compose"]  # no model call is repeated
    assert plan_events(done) == ["approved", "executed", "completed"]
    assert [e.tool for e in done.events if e.kind == "tool_call"] == ["plan_execute"]
    assert (workspace / "notes" / "outline.md").read_text() == OUTLINE
    memo = memo_of(done)
    assert "Game outline" in memo and "created notes/outline.md" in memo
    assert memo in contents(request_of(done, "sub_speak", "compose"))
    assert done.spoken == ["I wrote the outline."]
    (plan,) = store.list_plans(PERSONA.id)
    assert plan.state.status == "completed"
    assert [(a.approver, a.actor) for a in plan.state.approvals] == [("ken", "user")]
    assert [h.kind for h in plan.state.history] == [
        "plan_proposed", "specs_set", "approval_requested", "approved", "executed",
        "completed"]
    assert plan.sources and plan.sources[0].message_id  # made from the user's message
    assert store.list_plans(PERSONA.id)[0].id == plan.id  # one plan: nothing proposed twice


def test_a_partial_selection_runs_only_the_approved_spec(
    make: Make, store: SQLiteStore, workspace: Path
) -> None:
    waiting = make(script()).run_pulse(PERSONA, "meta_user", TASK)
    done = make({"sub_speak.compose": ["Made the folder only."]}).run_resume(
        waiting.pulse_id, {"ids": ["1"]})
    assert done.status == "ok", done.error
    assert (workspace / "notes").is_dir() and not (workspace / "notes" / "outline.md").exists()
    (plan,) = store.list_plans(PERSONA.id)
    assert plan.state.approvals[-1].selection.ids == ("1",)
    assert [r.spec_id for r in plan.state.results] == ["1"]
    assert "made folder notes" in memo_of(done)


def test_a_refusal_sends_the_plan_back_and_changes_nothing(
    make: Make, store: SQLiteStore, workspace: Path
) -> None:
    waiting = make(script()).run_pulse(PERSONA, "meta_user", TASK)
    done = make({"sub_speak.compose": ["All right, what should change?"]}).run_resume(
        waiting.pulse_id, {"approved": False, "reason": "use a docs folder"})
    assert done.status == "ok", done.error
    assert list(workspace.iterdir()) == []
    assert plan_events(done) == ["sent_back"]
    (plan,) = store.list_plans(PERSONA.id)
    assert plan.state.status == "proposed" and plan.state.approvals == ()
    memo = memo_of(done)
    assert "did not approve" in memo and "use a docs folder" in memo


def test_the_host_policy_approves_low_risk_and_the_pulse_never_waits(
    make: Make, store: SQLiteStore, workspace: Path
) -> None:
    runtime = make(script(speak="Written."), policy=PlanPolicy(auto_approve_up_to="low"))
    done = runtime.run_pulse(PERSONA, "meta_user", TASK)
    assert done.status == "ok", done.error
    assert plan_events(done) == ["plan_proposed", "specs_set", "approval_requested",
                                 "approved", "executed", "completed"]
    approved = [e for e in done.events if e.kind == "plan_event" and e.event == "approved"]
    assert approved[0].actor == "system"  # type: ignore[attr-defined]
    (plan,) = store.list_plans(PERSONA.id)
    assert [(a.approver, a.actor) for a in plan.state.approvals] == [("host policy", "system")]
    assert (workspace / "notes" / "outline.md").exists()


def test_a_high_risk_spec_waits_for_a_person_even_under_an_auto_policy(
    make: Make, workspace: Path
) -> None:
    (workspace / "old.md").write_text("old notes\n")
    draft = {**DRAFT, "specs": [{"kind": "delete", "path": "old.md"}]}
    runtime = make(script(**{"sub_plan.draft": [draft]}),
                   policy=PlanPolicy(auto_approve_up_to="medium"))
    waiting = runtime.run_pulse(PERSONA, "meta_user", "Delete old.md")
    assert waiting.status == "waiting", waiting.error
    assert waiting.approval is not None
    assert waiting.approval["plan_approval"]["high_risk"] == ["1"]
    assert (workspace / "old.md").exists()


def test_go_ahead_without_an_approved_plan_is_guarded(
    make: Make, store: SQLiteStore, workspace: Path
) -> None:
    runtime = make(script(step="go_ahead", speak="There is no approved plan yet."))
    done = runtime.run_pulse(PERSONA, "meta_user", "Go ahead and implement it")
    assert done.status == "ok", done.error
    assert plan_events(done) == [] and store.list_plans(PERSONA.id) == []
    # a go-ahead is sub_plan's alone by the router's prior (no router model call); no draft
    assert [(c.playbook, c.node) for c in done.llm_calls] == [
        ("sub_plan", "decide"), ("sub_speak", "compose")]
    memo = memo_of(done)
    assert "no approved plan" in memo and "Nothing was done" in memo
    assert "No plan is in progress" in memo
    assert memo in contents(request_of(done, "sub_speak", "compose"))
    assert list(workspace.iterdir()) == []


def test_go_ahead_with_a_plan_approved_elsewhere_executes_it(
    make: Make, store: SQLiteStore, workspace: Path
) -> None:
    service = PlanService(store, PERSONA.id, workspace)
    plan_id = service.propose("Game outline", "the outline").plan_id
    assert service.set_action_specs(plan_id, DRAFT["specs"]).ok
    service.approve(plan_id, "ken", {"all": True})  # e.g. `sea plan approve`
    runtime = make(script(step="go_ahead", speak="Done: the outline is written."))
    done = runtime.run_pulse(PERSONA, "meta_user", "Go ahead and implement it")
    assert done.status == "ok", done.error
    assert plan_events(done) == ["executed", "completed"]
    assert (workspace / "notes" / "outline.md").read_text() == OUTLINE
    # the router's prior sends a go-ahead to sub_plan at once: its planner sees the plan
    planner = contents(request_of(done, "sub_plan", "decide"))
    assert 'Plan in progress: "Game outline" (approved)' in planner
    assert "propose a new plan only if the user clearly asks" in planner
    assert "created notes/outline.md" in memo_of(done)


def test_plan_memory_reaches_router_and_planner_prompts_across_runtimes(
    make: Make, store: SQLiteStore
) -> None:
    waiting = make(script()).run_pulse(PERSONA, "meta_user", TASK)
    make({"sub_speak.compose": ["OK."]}).run_resume(waiting.pulse_id, False)  # sent back
    later = make(script(step="continue", speak="Here is the plan again."))  # a new process
    # two candidates are left (sub_plan, basic_chat): the router's model is asked
    again = later.run_pulse(PERSONA, "meta_user", "Can the outline go in docs/ instead?")
    assert again.status == "waiting", again.error
    router = contents(request_of(again, "sub_router_user", "decide"))
    assert 'Plan in progress: "Game outline" (proposed)' in router
    assert "Next: 1 mkdir notes (low); 2 create notes/outline.md (low)." in router
    planner = contents(request_of(again, "sub_plan", "draft"))
    assert 'Plan in progress: "Game outline"' in planner
    assert len(store.list_plans(PERSONA.id)) == 1  # continued, not proposed again
    chat = make({"sub_router_user.decide": [{"playbook": "basic_chat", "reason": "hi"}],
                 "sub_speak.compose": ["Hi!"]})
    hello = chat.run_pulse(PERSONA, "meta_user", "Do you remember my cat?")  # another runtime
    assert "propose a new plan only if" in contents(request_of(hello, "sub_router_user",
                                                                 "decide"))


def test_without_a_workspace_the_router_works_and_has_no_plans_to_offer(make: Make) -> None:
    runtime = make({"sub_router_user.decide": [{"playbook": "basic_chat", "reason": "hi"}],
                    "sub_speak.compose": ["Hi!"]}, workspace=False)
    done = runtime.run_pulse(PERSONA, "meta_user", "Do you remember my cat?")
    assert done.status == "ok", done.error
    offered = [e.result for e in done.events if e.kind == "tool_call"  # type: ignore[attr-defined]
               and e.tool == "rank_playbooks"]  # type: ignore[attr-defined]
    assert "sub_plan" not in set(offered[0]["scores"])
    router = contents(request_of(done, "sub_router_user", "decide"))
    assert "No plan is in progress." in router
    assert "consider proposing a new plan" in router


PIPELINE = {
    "name": "plan_pipeline",
    "description": "Plans the work with the plan tools in one pipeline.",
    "output_schema": ["outcomes"],
    "start_node": "act",
    "nodes": [
        {"id": "act", "type": "actions", "action": "Do what the user asked: {input}",
         "available_tools": ["plan_propose", "plan_set_action_specs", "plan_request_approval",
                             "plan_execute"],
         "max_actions": 4, "output_key": "outcomes", "error_next": "failed", "next": "memo"},
        {"id": "memo", "type": "memorize", "role": "user",
         "action": "<system>Outcomes: {outcomes}</system>"},
        {"id": "failed", "type": "memorize", "role": "user",
         "action": "<system>Failed: {error.message}</system>"},
    ],
}


def pipeline_plan() -> dict[str, Any]:
    def action(action_id: str, tool: str, parameters: dict[str, Any]) -> dict[str, Any]:
        return {"action_id": action_id, "tool": tool, "parameters": parameters}

    return {"actions": [
        action("plan", "plan_propose", {"title": "Game outline", "content": "the outline"}),
        action("specs", "plan_set_action_specs", {"plan_id": "ref:plan",
                                                  "specs": DRAFT["specs"]}),
        action("ask", "plan_request_approval", {"plan_id": "ref:plan"}),
        action("run", "plan_execute", {"plan_id": "ref:plan"}),
    ], "reason": "plan, approve, execute"}


def test_an_actions_pipeline_waits_at_the_approval_and_resumes_without_repeating(
    make: Make, store: SQLiteStore, workspace: Path
) -> None:
    (make.books / "plan_pipeline.json").write_bytes(orjson.dumps(PIPELINE))
    waiting = make({"plan_pipeline.act": [pipeline_plan()]}).run_pulse(
        PERSONA, "plan_pipeline", TASK)
    assert waiting.status == "waiting", waiting.error
    assert waiting.approval is not None and waiting.approval["action_id"] == "ask"
    assert [o["action_id"] for o in waiting.approval["done"]] == ["plan", "specs"]
    done = make({}).run_resume(waiting.pulse_id, True)  # its model has nothing to answer
    assert done.status == "ok", done.error
    assert done.llm_calls == []
    outcomes = done.outputs["outcomes"]
    assert [(o["action_id"], o["status"]) for o in outcomes] == [
        ("plan", "ok"), ("specs", "ok"), ("ask", "ok"), ("run", "ok")]
    assert outcomes[2]["result"]["approved"] is True
    assert outcomes[3]["result"]["outcome"] == "completed"
    assert [e.tool for e in done.events if e.kind == "tool_call"] == ["plan_execute"]
    assert len(store.list_plans(PERSONA.id)) == 1  # proposed once
    assert (workspace / "notes" / "outline.md").read_text() == OUTLINE


TOOL_CALL = {
    "name": "plan_by_call",
    "description": "The model chooses a plan tool; tool_call runs it.",
    "output_schema": ["approval"],
    "start_node": "think",
    "nodes": [
        {"id": "think", "type": "llm", "action": "Ask for approval: {input}",
         "context_profile": "worker", "available_tools": ["plan_request_approval"],
         "output_keys": [{"function_call": "fc"}], "next": "run"},
        {"id": "run", "type": "tool_call", "call_source": "fc", "output_key": "approval"},
    ],
}


def test_a_tool_call_node_runs_the_gated_tool_and_the_answer_settles_it(
    make: Make, store: SQLiteStore, workspace: Path
) -> None:
    (make.books / "plan_by_call.json").write_bytes(orjson.dumps(TOOL_CALL))
    service = PlanService(store, PERSONA.id, workspace)
    plan_id = service.propose("Game outline", "the outline").plan_id
    assert service.set_action_specs(plan_id, DRAFT["specs"]).ok
    chosen = {"tool_calls": [{"name": "plan_request_approval", "args": {"plan_id": plan_id}}],
              "content": ""}
    waiting = make({"plan_by_call.think": [chosen]}).run_pulse(PERSONA, "plan_by_call", "go")
    assert waiting.status == "waiting", waiting.error
    done = make({}).run_resume(waiting.pulse_id, {"up_to": "low"})
    assert done.status == "ok", done.error
    assert done.outputs["approval"]["approved"] is True
    assert done.outputs["approval"]["spec_ids"] == ["1", "2"]
    assert store.get_plan(PERSONA.id, plan_id).state.status == "approved"


def test_a_runtime_without_the_workspace_cannot_take_the_answer(
    make: Make, store: SQLiteStore, workspace: Path
) -> None:
    asked = {"sub_plan.decide": [{"step": "new"}], "sub_plan.draft": [DRAFT]}
    waiting = make(asked).run_pulse(PERSONA, "sub_plan", TASK)
    assert waiting.status == "waiting", waiting.error
    done = make({}, workspace=False).run_resume(waiting.pulse_id, True)
    assert done.status == "error" and done.error is not None
    assert done.error["code"] == UsageError.code
    assert "resume it with --workspace" in done.error["message"]
    assert str(workspace.resolve()) in done.error["message"]
    via_router = make(script()).run_pulse(PERSONA, "meta_user", TASK)
    later = make({"sub_speak.compose": ["I could not."]}, workspace=False).run_resume(
        via_router.pulse_id, True)
    assert later.status == "error" and later.error is not None
    assert "resume it with --workspace" in later.error["message"]
    assert [p.state.status for p in store.list_plans(PERSONA.id)] == ["pending_review"] * 2
    assert list(workspace.iterdir()) == []  # nothing approved, nothing written
    # neither answer was taken: both pulses still wait for one in their workspace
    assert make({}).run_resume(waiting.pulse_id, True).status == "ok"
    assert make({"sub_speak.compose": ["Done."]}).run_resume(via_router.pulse_id, True).status \
        == "ok"
