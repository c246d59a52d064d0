"""Plans in the store (every backend): save and read back whole, optimistic concurrency,
lists by status, one current plan per persona, refusals that write nothing."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from saimemory import NewMessage
from saimemory.errors import InvalidPlanError, NotFoundError, StaleVersionError
from saimemory.plan_codec import plan_from_dict, plan_to_dict
from saimemory.plans import (
    ActionSpec,
    ActionSpecExt,
    Approval,
    DiffSummary,
    MessageRef,
    Plan,
    PlanHistoryEntry,
    PlanPreview,
    PlanState,
    Preflight,
    SpecResult,
    SpecSelection,
)
from saimemory.sqlbase import SqlStore

T0 = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def new_plan(plan_id: str = "p1", persona: str = "alice", **kwargs: object) -> Plan:
    fields: dict[str, object] = {
        "id": plan_id, "persona": persona, "title": "Outline the game",
        "content": "1. write notes/outline.md", "created_at": T0,
    }
    fields.update(kwargs)
    return Plan(**fields)  # type: ignore[arg-type]


def full_state() -> PlanState:
    """A state with every part filled, for round trips."""
    spec = ActionSpecExt(
        id="1", base=ActionSpec("write", "notes/outline.md", "# Outline\n", "the outline", True),
        risk="medium", validated=True,
        preflight=Preflight(exists=True, overwrite=True, diff_summary="+1 -0", fingerprint="ab"),
        notes="overwrites",
    )
    run = ActionSpecExt(id="2", base=ActionSpec("run", ".", "pytest -q"), risk="high")
    tokyo = timezone(timedelta(hours=9))
    return PlanState(
        status="aborted",
        action_specs=(spec, run),
        selection=SpecSelection(ids=("1", "2")),
        approvals=(Approval("ken", T0.astimezone(tokyo), SpecSelection(all=True),
                            fingerprints={"1": "ab"}),),
        previews=PlanPreview(
            files=("notes/outline.md",),
            diffs=(DiffSummary("1", "write", "notes/outline.md", "medium", 1, 0,
                               "--- a\n+++ b\n+# Outline\n"),),
            risk_score=0.4,
        ),
        results=(SpecResult("1", "write", "notes/outline.md", True, "written", T0, T0),
                 SpecResult("2", "run", ".", False, "exit 1", T0, T0, "boom\n", 1)),
        approval_request="req-1",
        history=(PlanHistoryEntry("plan_proposed", "ai", "proposed", T0),
                 PlanHistoryEntry("aborted", "system", "aborted", T0.astimezone(tokyo),
                                  "spec 2 failed", {"specs": 2, "remaining": 1}, 1.0)),
    )


def test_a_new_plan_is_saved_at_version_1_and_read_back_whole(store: SqlStore) -> None:
    plan = new_plan(sources=(MessageRef("42", "2025-03-01T11:59:00+00:00"),),
                    rationale="the user asked", tags=("game", "notes"), state=full_state())
    saved = store.save_plan(plan)
    assert saved.version == 1 and saved.updated_at is not None
    assert saved.updated_at.tzinfo is not None
    assert dataclasses.replace(saved, version=0, updated_at=None) == plan
    got = store.get_plan("alice", "p1")
    assert got == saved
    assert got.state.approvals[0].timestamp == T0
    assert got.state.results[1].exit_code == 1 and got.state.results[1].output == "boom\n"


def test_the_json_form_round_trips(store: SqlStore) -> None:
    saved = store.save_plan(new_plan(state=full_state(), tags=("x",)))
    data = plan_to_dict(saved)
    assert data["state"]["status"] == "aborted" and data["version"] == 1
    assert plan_from_dict(data) == saved


def test_an_update_bumps_the_version_and_keeps_persona_and_creation(store: SqlStore) -> None:
    first = store.save_plan(new_plan())
    changed = dataclasses.replace(first, title="Outline v2",
                                  state=PlanState(status="pending_review"))
    second = store.save_plan(changed)
    assert second.version == 2
    got = store.get_plan("alice", "p1")
    assert (got.title, got.state.status, got.version, got.created_at) == (
        "Outline v2", "pending_review", 2, T0)


def test_saving_a_stale_version_is_refused_and_writes_nothing(store: SqlStore) -> None:
    first = store.save_plan(new_plan())
    store.save_plan(dataclasses.replace(first, title="theirs"))
    with pytest.raises(StaleVersionError, match="at version 2, but this save was made from "
                       "version 1") as info:
        store.save_plan(dataclasses.replace(first, title="mine"))
    assert info.value.code == "MEM008"
    got = store.get_plan("alice", "p1")
    assert (got.title, got.version) == ("theirs", 2)


def test_a_second_connection_sees_the_stale_save_too(open_same: object) -> None:
    one: SqlStore = open_same()  # type: ignore[operator]
    two: SqlStore = open_same()  # type: ignore[operator]
    saved = one.save_plan(new_plan())
    read = two.get_plan("alice", "p1")
    one.save_plan(dataclasses.replace(saved, title="first writer"))
    with pytest.raises(StaleVersionError):
        two.save_plan(dataclasses.replace(read, title="second writer"))
    assert two.get_plan("alice", "p1").title == "first writer"


def test_inserting_an_existing_id_is_refused(store: SqlStore) -> None:
    store.save_plan(new_plan())
    with pytest.raises(InvalidPlanError, match="already exists"):
        store.save_plan(new_plan(title="again"))
    assert store.get_plan("alice", "p1").title == "Outline the game"


def test_updating_or_reading_another_personas_plan_is_not_found(store: SqlStore) -> None:
    saved = store.save_plan(new_plan())
    with pytest.raises(NotFoundError):
        store.get_plan("bob", "p1")
    with pytest.raises(NotFoundError):
        store.save_plan(dataclasses.replace(saved, persona="bob"))
    with pytest.raises(NotFoundError):
        store.save_plan(new_plan("p-missing", version=3))
    with pytest.raises(NotFoundError):
        store.set_current_plan("bob", "p1")
    assert store.current_plan("bob") is None


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"title": "  "}, "title must be a non-empty string"),
        ({"title": "x" * 501}, "longer than 500"),
        ({"id": ""}, "plan id must be a non-empty string"),
        ({"persona": "a\x00b"}, "persona must be at most"),
        ({"content": "nul\x00"}, "content must be a string without NUL"),
        ({"created_at": datetime(2025, 1, 1)}, "timezone-aware"),
        ({"version": -1}, "version must be an integer >= 0"),
        ({"tags": ("",)}, "plan tag must be a non-empty string"),
        ({"state": PlanState(status="done")}, "status must be one of"),  # type: ignore[arg-type]
        ({"state": PlanState(action_specs=(
            ActionSpecExt("1", ActionSpec("write", "a")),
            ActionSpecExt("1", ActionSpec("read", "a")),
        ))}, "used twice"),
        ({"state": PlanState(action_specs=(
            ActionSpecExt("1", ActionSpec("rm", "a")),  # type: ignore[arg-type]
        ))}, "kind must be one of"),
        ({"state": PlanState(action_specs=(
            ActionSpecExt("1", ActionSpec("read", "a"), risk="extreme"),  # type: ignore[arg-type]
        ))}, "risk must be one of"),
    ],
)
def test_invalid_plans_are_refused_before_writing(
    store: SqlStore, change: dict[str, Any], problem: str
) -> None:
    with pytest.raises(InvalidPlanError, match=problem) as info:
        store.save_plan(new_plan(**change))
    assert info.value.code == "MEM009"
    assert store.list_plans("alice") == []


def test_lists_are_newest_first_and_filter_by_status(store: SqlStore) -> None:
    store.save_plan(new_plan("old", created_at=T0))
    store.save_plan(new_plan("mid", created_at=T0 + timedelta(minutes=1),
                             state=PlanState(status="approved")))
    store.save_plan(new_plan("new", created_at=T0 + timedelta(minutes=2),
                             state=PlanState(status="completed")))
    store.save_plan(new_plan("bobs", persona="bob"))
    assert [p.id for p in store.list_plans("alice")] == ["new", "mid", "old"]
    assert [p.id for p in store.list_plans("alice", status="approved")] == ["mid"]
    assert [p.id for p in store.list_plans("alice", status=["proposed", "completed"])] == [
        "new", "old"]
    assert store.list_plans("alice", status=[]) == []
    assert [p.id for p in store.list_plans("bob")] == ["bobs"]
    with pytest.raises(InvalidPlanError, match="status must be one of"):
        store.list_plans("alice", status="done")  # type: ignore[arg-type]


def test_one_current_plan_per_persona(store: SqlStore) -> None:
    assert store.current_plan("alice") is None
    first = store.save_plan(new_plan("p1"), make_current=True)
    assert store.current_plan("alice") == first
    second = store.save_plan(new_plan("p2"), make_current=True)
    store.save_plan(new_plan("b1", persona="bob"), make_current=True)
    assert store.current_plan("alice") == second
    store.set_current_plan("alice", "p1")
    assert store.current_plan("alice") == first
    updated = store.save_plan(dataclasses.replace(first, title="newer title"))
    assert store.current_plan("alice") == updated
    assert store.clear_current_plan("alice") == "p1"
    assert store.current_plan("alice") is None
    assert store.clear_current_plan("alice") is None
    with pytest.raises(InvalidPlanError, match="persona must be"):
        store.current_plan("a\x00b")
    current_bob = store.current_plan("bob")
    assert current_bob is not None and current_bob.id == "b1"


def test_a_refused_save_does_not_change_the_current_plan(store: SqlStore) -> None:
    saved = store.save_plan(new_plan("p1"), make_current=True)
    store.save_plan(dataclasses.replace(saved, title="moved on"))
    with pytest.raises(StaleVersionError):
        store.save_plan(new_plan("p1", version=1), make_current=True)
    store.save_plan(new_plan("p2"))
    with pytest.raises(InvalidPlanError):
        store.save_plan(new_plan("p2"), make_current=True)
    current = store.current_plan("alice")
    assert current is not None and current.id == "p1"


def test_deleting_a_persona_deletes_its_plans(store: SqlStore) -> None:
    store.append(NewMessage("alice", "user", "hi"))
    store.save_plan(new_plan("p1"), make_current=True)
    store.save_plan(new_plan("b1", persona="bob"), make_current=True)
    assert store.delete_persona("alice") == 1
    assert store.list_plans("alice") == [] and store.current_plan("alice") is None
    with pytest.raises(NotFoundError):
        store.get_plan("alice", "p1")
    assert [p.id for p in store.list_plans("bob")] == ["b1"]
    store.save_plan(new_plan("p1"))
    assert [p.id for p in store.list_plans("alice")] == ["p1"]
