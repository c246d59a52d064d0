"""The plan API as langchain-core tools: their catalogue, results, events, refs, and the gate
that settles ``plan_request_approval`` with a person's answer (or the host policy)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from saimemory.base import MessageStore
from sea.engine.answers import parse_answer
from sea.engine.plans import PlanEvent, PlanPolicy
from sea.engine.plans.tools import GATED_TOOL, HOST_APPROVER, PlanToolkit
from sea.engine.tools.box import ToolBox
from sea.engine.tools.refs import ToolParameters, resolve_parameters
from sea.engine.tools.signatures import PLAN_ARGUMENTS, plan_tool_schemas
from sea.engine.tools.workspace import Workspace
from sea.errors import PlanApprovalError, ToolFailed

SPECS = [{"kind": "mkdir", "path": "notes", "description": "a folder"},
         {"kind": "create", "path": "notes/outline.md", "content": "# Outline\n"}]

Seen = list[tuple[PlanEvent, str | None, str | None]]


def kit(store: MessageStore, workspace: Path, seen: Seen,
        policy: PlanPolicy | None = None) -> PlanToolkit:
    return PlanToolkit(store, "aoi", Workspace(workspace), policy,
                       on_event=lambda event, playbook, node: seen.append((event, playbook, node)))


def call(box: ToolBox, name: str, args: dict[str, Any]) -> Any:
    return asyncio.run(box.invoke(name, args, playbook="pb", node="n1"))


def test_the_tools_are_the_catalogue_and_ids_declare_their_ref_keys(
    store: MessageStore, workspace: Path
) -> None:
    tools = kit(store, workspace, []).tools()
    assert sorted(t.name for t in tools) == sorted(PLAN_ARGUMENTS)
    assert {t.name: t.args_schema for t in tools} == PLAN_ARGUMENTS
    schemas = plan_tool_schemas()
    for name, schema in schemas.items():
        if "plan_id" in schema["properties"]:
            assert schema["properties"]["plan_id"]["x-sea-ref"] == ["plan_id"], name
    assert schemas["plan_get_step"]["properties"]["step_id"]["x-sea-ref"] == [
        "step_id", "first_step_id"]
    assert {"plan_propose", "plan_set_action_specs", "plan_preview", "plan_request_approval",
            "plan_execute", "plan_get_current"} <= set(schemas)
    assert "plan_approve" not in schemas  # a person (or the host policy) approves


def test_a_ref_to_a_proposal_gives_its_plan_id_and_first_step_id() -> None:
    proposed = {"plan_id": "p1", "first_step_id": "p1:1"}
    results = {"plan": proposed}
    args, normalized, _ = resolve_parameters(
        "plan_set_action_specs", plan_tool_schemas()["plan_set_action_specs"],
        {"plan_id": "ref:plan", "specs": SPECS}, results)
    assert args["plan_id"] == "p1" and normalized[0].rule == "id.key"
    args, _, _ = resolve_parameters("plan_get_step", plan_tool_schemas()["plan_get_step"],
                                    {"step_id": "ref:plan"}, results)
    assert args["step_id"] == "p1:1"


def test_the_tools_walk_the_lifecycle_and_report_events_with_their_node(
    store: MessageStore, workspace: Path
) -> None:
    seen: Seen = []
    box = ToolBox(kit(store, workspace, seen).tools())
    made = call(box, "plan_propose", {"title": "Outline", "content": "Write the outline."})
    assert set(made) == {"plan_id", "first_step_id"}
    plan_id = made["plan_id"]
    assert made["first_step_id"] is None  # no step yet
    assert call(box, "plan_get_state", {"plan_id": plan_id})["first_step_id"] is None
    report = call(box, "plan_set_action_specs", {"plan_id": plan_id, "specs": SPECS})
    assert report["ok"] is True and report["issues"] == []
    assert [s["id"] for s in report["normalized"]] == ["1", "2"]
    assert report["first_step_id"] == f"{plan_id}:1"
    step = call(box, "plan_get_step", {"step_id": report["first_step_id"]})
    assert step["spec"]["base"]["kind"] == "mkdir" and step["status"] == "pending_review"
    preview = call(box, "plan_preview", {"plan_id": plan_id})
    assert preview["files"] == ["notes", "notes/outline.md"]
    assert "+# Outline" in preview["diffs"][1]["diff"]
    asked = call(box, "plan_request_approval", {"plan_id": plan_id})
    assert asked["needs_person"] is True and asked["title"] == "Outline"
    assert [s["id"] for s in asked["specs"]] == ["1", "2"]
    assert call(box, "plan_get_current", {})["plan"]["plan_id"] == plan_id
    assert [p["plan_id"] for p in call(box, "plan_list", {})["plans"]] == [plan_id]
    state = call(box, "plan_get_state", {"plan_id": plan_id})
    assert state["status"] == "pending_review" and "approve" in state["allowed_calls"]
    assert state["first_step_id"] == f"{plan_id}:1"
    with pytest.raises(ToolFailed, match="it is pending_review"):
        call(box, "plan_execute", {"plan_id": plan_id})  # nothing approved: nothing runs
    assert not (workspace / "notes").exists()
    assert [(e.kind, p, n) for e, p, n in seen] == [
        ("plan_proposed", "pb", "n1"), ("specs_set", "pb", "n1"),
        ("approval_requested", "pb", "n1")]
    assert call(box, "plan_clear_current", {}) == {"current": None}
    assert call(box, "plan_get_current", {}) == {"plan": None}


def test_invalid_specs_come_back_as_issues_to_fix(store: MessageStore, workspace: Path) -> None:
    box = ToolBox(kit(store, workspace, []).tools())
    plan_id = call(box, "plan_propose", {"title": "t", "content": "c"})["plan_id"]
    report = call(box, "plan_set_action_specs", {"plan_id": plan_id, "specs": [
        {"kind": "create", "path": "../escape.md", "content": "x"}]})
    assert report["ok"] is False
    assert "leaves the workspace" in report["issues"][0]
    with pytest.raises(ToolFailed, match="did not pass validation"):
        call(box, "plan_request_approval", {"plan_id": plan_id})


def test_a_step_id_with_no_spec_yet_says_so(store: MessageStore, workspace: Path) -> None:
    box = ToolBox(kit(store, workspace, []).tools())
    made = call(box, "plan_propose", {"title": "t", "content": "c"})
    assert made["first_step_id"] is None
    with pytest.raises(ToolFailed, match="none yet: set its action specs first"):
        call(box, "plan_get_step", {"step_id": f"{made['plan_id']}:1"})


def requested(store: MessageStore, workspace: Path, specs: list[dict[str, Any]],
              policy: PlanPolicy | None = None) -> tuple[PlanToolkit, dict[str, Any]]:
    toolkit = kit(store, workspace, [], policy)
    box = ToolBox(toolkit.tools())
    plan_id = call(box, "plan_propose", {"title": "t", "content": "c"})["plan_id"]
    assert call(box, "plan_set_action_specs", {"plan_id": plan_id, "specs": specs})["ok"]
    return toolkit, call(box, GATED_TOOL, {"plan_id": plan_id})


def settle(toolkit: PlanToolkit, request: dict[str, Any], answer: Any) -> dict[str, Any]:
    gate = toolkit.gates()[GATED_TOOL]
    settled: dict[str, Any] = asyncio.run(gate.settle(request, answer, playbook="p", node="n"))
    return settled


@pytest.mark.parametrize(
    ("answer", "approved", "ids"),
    [
        (True, True, ["1", "2"]),
        ({"all": True}, True, ["1", "2"]),
        ({"ids": ["2"]}, True, ["2"]),
        ({"ids": [2]}, True, ["2"]),
        ("low", True, ["1", "2"]),
        (False, False, []),
        ({"approved": False, "reason": "not now"}, False, []),
        ("maybe", False, []),
        ({"ids": []}, False, []),
    ],
)
def test_an_answer_approves_what_it_selects_or_sends_the_plan_back(
    store: MessageStore, workspace: Path, answer: Any, approved: bool, ids: list[str]
) -> None:
    toolkit, request = requested(store, workspace, SPECS)
    assert toolkit.gates()[GATED_TOOL].request(request) is not None
    settled = settle(toolkit, request, answer)
    assert (settled["approved"], settled["spec_ids"]) == (approved, ids)
    plan = store.get_plan("aoi", request["plan_id"])
    if approved:
        assert plan.state.status == "approved"
        assert plan.state.approvals[-1].approver == "user"
        assert plan.state.approvals[-1].actor == "user"
    else:
        assert plan.state.status == "proposed" and not plan.state.approvals
        assert plan.state.history[-1].kind == "sent_back"


def test_an_answer_naming_specs_not_asked_about_approves_nothing(
    store: MessageStore, workspace: Path
) -> None:
    toolkit, request = requested(store, workspace, SPECS)
    with pytest.raises(PlanApprovalError, match="spec\\(s\\) 7, which were not asked"):
        settle(toolkit, request, {"ids": ["1", "7"]})
    assert store.get_plan("aoi", request["plan_id"]).state.status == "pending_review"


def test_up_to_low_leaves_a_medium_risk_spec_out(store: MessageStore, workspace: Path) -> None:
    (workspace / "old.md").write_text("old\n")
    specs = [*SPECS, {"kind": "write", "path": "old.md", "content": "new\n"}]  # overwrite
    toolkit, request = requested(store, workspace, specs)
    assert [s["risk"] for s in request["specs"]] == ["low", "low", "medium"]
    settled = settle(toolkit, request, {"up_to": "low", "approver": "ken"})
    assert settled["spec_ids"] == ["1", "2"] and settled["approver"] == "ken"
    approval = store.get_plan("aoi", request["plan_id"]).state.approvals[-1]
    assert approval.selection.ids == ("1", "2") and approval.approver == "ken"


def test_the_host_policy_approves_low_risk_without_a_person(
    store: MessageStore, workspace: Path
) -> None:
    toolkit, request = requested(store, workspace, SPECS, PlanPolicy(auto_approve_up_to="low"))
    assert request["needs_person"] is False
    assert toolkit.gates()[GATED_TOOL].request(request) is None
    settled = settle(toolkit, request, None)
    assert settled["approved"] is True and settled["auto"] is True
    approval = store.get_plan("aoi", request["plan_id"]).state.approvals[-1]
    assert (approval.approver, approval.actor) == (HOST_APPROVER, "system")


def test_a_high_risk_spec_always_needs_a_person(store: MessageStore, workspace: Path) -> None:
    (workspace / "old.md").write_text("old\n")
    _, request = requested(store, workspace, [{"kind": "delete", "path": "old.md"}],
                           PlanPolicy(auto_approve_up_to="medium"))
    assert request["needs_person"] is True and request["high_risk"] == ["1"]


@pytest.mark.parametrize(
    ("answer", "approved", "ids", "up_to"),
    [
        (True, True, None, None), ("yes", True, None, None), ("all", True, None, None),
        ({"approved": True}, True, None, None), ({"all": True}, True, None, None),
        ({"ids": ["1", "3"]}, True, ("1", "3"), None), ("medium", True, None, "medium"),
        ({"up_to": "low"}, True, None, "low"), (False, False, None, None),
        ("deny", False, None, None), ({"deny": True}, False, None, None),
        ({"up_to": "extreme"}, False, None, None), (None, False, None, None),
        ({"ids": "1"}, False, None, None),
    ],
)
def test_answers_are_read_in_one_place(
    answer: Any, approved: bool, ids: tuple[str, ...] | None, up_to: str | None
) -> None:
    parsed = parse_answer(answer)
    assert (parsed.approved, parsed.ids, parsed.up_to) == (approved, ids, up_to)


def test_the_events_sent_are_the_history_kept_with_the_plan(
    store: MessageStore, workspace: Path
) -> None:
    seen: Seen = []
    box = ToolBox(kit(store, workspace, seen).tools())
    plan_id = call(box, "plan_propose", {"title": "t", "content": "c"})["plan_id"]
    call(box, "plan_set_action_specs", {"plan_id": plan_id, "specs": SPECS})
    history = store.get_plan("aoi", plan_id).state.history
    assert [PlanEvent.of(entry, plan_id, "aoi") for entry in history] == [e for e, _, _ in seen]


def test_a_plan_keeps_only_its_newest_events(
    store: MessageStore, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sea.engine.plans.service as service_module

    monkeypatch.setattr(service_module, "MAX_HISTORY", 3)
    box = ToolBox(kit(store, workspace, []).tools())
    plan_id = call(box, "plan_propose", {"title": "t", "content": "c"})["plan_id"]
    for _ in range(3):
        call(box, "plan_set_action_specs", {"plan_id": plan_id, "specs": SPECS})
    call(box, "plan_request_approval", {"plan_id": plan_id})
    kinds = [h.kind for h in store.get_plan("aoi", plan_id).state.history]
    assert kinds == ["specs_set", "specs_set", "approval_requested"]


def test_each_plan_tool_maker_makes_the_tool_of_its_name(
    store: MessageStore, workspace: Path
) -> None:
    box = ToolBox(makers=kit(store, workspace, []).tool_makers())
    assert box.names() == sorted(PLAN_ARGUMENTS)
    assert {name: box.get(name).args_schema for name in box.names()} == PLAN_ARGUMENTS


def test_a_step_id_ref_to_a_result_with_only_a_plan_id_needs_a_look_up() -> None:
    fitting = ToolParameters("plan_get_step", plan_tool_schemas()["plan_get_step"])
    ref = {"step_id": "ref:plan"}
    assert fitting.lookups(ref, {"plan": {"plan_id": "p1", "first_step_id": "p1:1"}}) == []
    (needed,) = fitting.lookups(ref, {"plan": {"plan_id": "p1", "first_step_id": None}})
    assert (needed.parameter, needed.ref, needed.tool, needed.key, needed.value) == (
        "step_id", "plan", "plan_get_state", "plan_id", "p1")
    assert needed.merged({"plan_id": "p1"}, {"first_step_id": "p1:2", "status": "x"}) == {
        "plan_id": "p1", "first_step_id": "p1:2"}
    assert fitting.lookups(ref, {"plan": {"title": "no id"}}) == []
    assert fitting.lookups({"step_id": "p1:1"}, {"plan": {"plan_id": "p1"}}) == []
