"""Every lifecycle call in every status: the legal ones lead where the table says, the
illegal ones raise PlanTransitionError naming the status and the calls allowed in it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from saimemory.base import MessageStore
from saimemory.plans import PLAN_STATUSES, PlanStatus
from sea.engine.plans import PlanService, allowed_calls
from sea.engine.plans.lifecycle import TRANSITIONS
from sea.errors import PlanTransitionError
from tests.plans.conftest import PYTHON_ONLY, MakeService, python_command

FAIL_UNLESS_OK_FILE = python_command(
    "import os, sys; sys.exit(0 if os.path.exists('ok') else 3)")


def good_specs() -> list[dict[str, object]]:
    return [{"kind": "create", "path": "notes/a.md", "content": "a\n"},
            {"kind": "run", "path": ".", "content": FAIL_UNLESS_OK_FILE}]


def plan_in(service: PlanService, store: MessageStore, workspace: Path,
            status: PlanStatus) -> str:
    """A plan of ``service`` brought to ``status`` through the API (executing: a run that
    died, as a crashed process leaves it)."""
    plan_id = service.propose("t", "c").plan_id
    if status == "proposed":
        return plan_id
    assert service.set_action_specs(plan_id, good_specs()).ok
    if status == "pending_review":
        return plan_id
    service.approve(plan_id, "ken", {"all": True})
    if status == "scheduled":
        service.mark_pending(plan_id)
    elif status == "completed":
        (workspace / "ok").touch()
        assert service.execute(plan_id).outcome == "completed"
    elif status == "aborted":
        assert service.execute(plan_id).outcome == "aborted"
    elif status == "executing":
        plan = store.get_plan("aoi", plan_id)
        store.save_plan(dataclasses.replace(
            plan, state=dataclasses.replace(plan.state, status="executing")))
    assert service.get_state(plan_id).status == status
    return plan_id


Call = Callable[[PlanService, str], object]
CALLS: dict[str, Call] = {
    "set_action_specs": lambda s, p: s.set_action_specs(p, good_specs()),
    "preview": lambda s, p: s.preview(p),
    "request_approval": lambda s, p: s.request_approval(p, {"all": True}),
    "approve": lambda s, p: s.approve(p, "ken", {"all": True}),
    "reject": lambda s, p: s.reject(p, "not like this"),
    "mark_pending": lambda s, p: s.mark_pending(p, True),
    "mark_pending(pending=False)": lambda s, p: s.mark_pending(p, False),
    "execute": lambda s, p: s.execute(p),
    "abort": lambda s, p: s.abort(p, "the run died"),
}

LEGAL: dict[str, dict[PlanStatus, PlanStatus]] = {
    "set_action_specs": {"proposed": "pending_review", "pending_review": "pending_review"},
    "preview": {s: s for s in ("pending_review", "approved", "scheduled", "aborted")},
    "request_approval": {s: s for s in ("pending_review", "approved", "scheduled", "aborted")},
    "approve": {s: "approved" for s in ("pending_review", "approved", "scheduled", "aborted")},
    "reject": {s: "proposed" for s in ("pending_review", "approved", "scheduled", "aborted")},
    "mark_pending": {"approved": "scheduled"},
    "mark_pending(pending=False)": {"scheduled": "approved"},
    # the plan's run spec fails (no `ok` file): approved and scheduled plans abort, and so
    # does an aborted one executed again
    "execute": {"approved": "aborted", "scheduled": "aborted", "aborted": "aborted"},
    "abort": {"executing": "aborted"},
}
"""Where each legal call leads, written out here independently of the lifecycle table."""

CASES = [(call, status) for call in CALLS for status in PLAN_STATUSES]


@pytest.mark.parametrize(("call", "status"), CASES)
def test_every_call_in_every_status(
    make_service: MakeService, store: MessageStore, workspace: Path, call: str,
    status: PlanStatus,
) -> None:
    service = make_service(PYTHON_ONLY)
    plan_id = plan_in(service, store, workspace, status)
    before = store.get_plan("aoi", plan_id)
    if status in LEGAL[call]:
        CALLS[call](service, plan_id)
        assert service.get_state(plan_id).status == LEGAL[call][status]
        return
    with pytest.raises(PlanTransitionError) as info:
        CALLS[call](service, plan_id)
    error = info.value
    assert error.code == "SEA584"
    assert (error.plan_id, error.status, error.call) == (plan_id, status, call)
    expected_allowed = tuple(c for c in CALLS if status in LEGAL[c])
    assert error.allowed == expected_allowed
    assert f"it is {status}" in error.message
    for allowed in expected_allowed:
        assert allowed in error.message
    if not expected_allowed:
        assert "none (the plan is finished)" in error.message
    assert store.get_plan("aoi", plan_id) == before, "a refused call changed the plan"


def test_the_table_and_the_expectations_agree() -> None:
    assert [t.call for t in TRANSITIONS] == list(CALLS)
    for status in PLAN_STATUSES:
        assert allowed_calls(status) == tuple(c for c in CALLS if status in LEGAL[c])


def test_execute_a_proposed_plan_says_what_to_do(service: PlanService) -> None:
    plan_id = service.propose("t", "c").plan_id
    with pytest.raises(PlanTransitionError, match=r"cannot execute plan .*: it is proposed; "
                       r"the calls allowed when proposed are: set_action_specs; give it "
                       r"action specs first"):
        service.execute(plan_id)


def test_approve_a_completed_plan_is_refused(
    make_service: MakeService, store: MessageStore, workspace: Path
) -> None:
    service = make_service(PYTHON_ONLY)
    plan_id = plan_in(service, store, workspace, "completed")
    with pytest.raises(PlanTransitionError, match="it is completed; .*none .*propose a new"):
        service.approve(plan_id, "ken", {"all": True})


def test_a_failed_validation_keeps_pending_review(service: PlanService) -> None:
    plan_id = service.propose("t", "c").plan_id
    report = service.set_action_specs(plan_id, [{"kind": "write", "path": "../x", "content": ""}])
    assert not report.ok and service.get_state(plan_id).status == "pending_review"
    good = service.set_action_specs(plan_id, [{"kind": "write", "path": "x", "content": ""}])
    assert good.ok and service.get_state(plan_id).status == "pending_review"
    bad = service.set_action_specs(plan_id, [{"kind": "write", "path": "/x", "content": ""}])
    assert not bad.ok and service.get_state(plan_id).status == "pending_review"


def test_a_send_back_returns_to_proposed_and_needs_specs_again(
    service: PlanService, workspace: Path
) -> None:
    plan_id = service.propose("t", "c").plan_id
    service.set_action_specs(plan_id, [{"kind": "create", "path": "a.txt", "content": "a"}])
    service.approve(plan_id, "ken", {"all": True})
    state = service.reject(plan_id, "make it b.txt")
    assert state.status == "proposed" and state.selection is None
    assert len(state.approvals) == 1, "the approval stays as history"
    with pytest.raises(PlanTransitionError, match="it is proposed"):
        service.execute(plan_id)
    service.set_action_specs(plan_id, [{"kind": "create", "path": "b.txt", "content": "b"}])
    service.approve(plan_id, "ken", {"all": True})
    assert service.execute(plan_id).overall_success
    assert (workspace / "b.txt").read_text() == "b" and not (workspace / "a.txt").exists()
