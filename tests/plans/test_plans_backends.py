"""The plan service on both store backends: the whole path, an abort and its remainder, and
a concurrent change between two connections (PostgreSQL when SEA_TEST_POSTGRES_DSN is set)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore
from sea.engine.plans import PlanService, export_plan
from sea.errors import PlanConcurrencyError
from tests.plans.conftest import PYTHON_ONLY, python_command

POSTGRES_DSN = os.environ.get("SEA_TEST_POSTGRES_DSN")


@pytest.fixture(params=[
    "sqlite",
    pytest.param("postgres", marks=[
        pytest.mark.postgres,
        pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]),
])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[SqlStore, SqlStore]]:
    """Two connections to one fresh store of the backend under test."""
    if request.param == "sqlite":
        opened: list[SqlStore] = [SQLiteStore(tmp_path / "m.db"), SQLiteStore(tmp_path / "m.db")]
        yield opened[0], opened[1]
        for store in opened:
            store.close()
        return
    from saimemory.postgres import PostgresStore

    assert POSTGRES_DSN is not None
    schema = f"t_{uuid.uuid4().hex[:20]}"
    one, two = PostgresStore(POSTGRES_DSN, schema=schema), PostgresStore(POSTGRES_DSN,
                                                                         schema=schema)
    yield one, two
    two.close()
    one.drop_schema()
    one.close()


def test_the_lifecycle_on_every_backend(
    stores: tuple[SqlStore, SqlStore], workspace: Path, tmp_path: Path
) -> None:
    one, two = stores
    first = PlanService(one, "aoi", workspace, PYTHON_ONLY)
    again = PlanService(two, "aoi", workspace, PYTHON_ONLY)
    plan_id = first.propose("Outline", "c", sources=[{"message_id": "1", "timestamp": "t"}]
                            ).plan_id
    current = again.get_current()
    assert current is not None and current.plan_id == plan_id
    report = again.set_action_specs(plan_id, [
        {"kind": "create", "path": "notes/a.md", "content": "a\n"},
        {"kind": "run", "content": python_command(
            "import os, sys; sys.exit(0 if os.path.exists('ok') else 1)")},
        {"kind": "create", "path": "notes/b.md", "content": "b\n"},
    ])
    assert report.ok
    first.request_approval(plan_id, {"all": True})
    again.approve(plan_id, "ken", {"all": True})
    aborted = first.execute(plan_id)
    assert aborted.outcome == "aborted" and aborted.remaining == ("2", "3")
    (workspace / "ok").touch()
    done = again.execute(plan_id)
    assert done.overall_success and [r.spec_id for r in done.results] == ["2", "3"]
    assert (workspace / "notes" / "b.md").read_text() == "b\n"
    state = first.get_state(plan_id)
    assert state.status == "completed" and len(state.results) == 4
    assert [(h.kind, h.actor, h.status) for h in state.history] == [
        ("plan_proposed", "ai", "proposed"), ("specs_set", "ai", "pending_review"),
        ("approval_requested", "ai", "pending_review"), ("approved", "user", "approved"),
        ("executed", "user", "aborted"), ("aborted", "system", "aborted"),
        ("executed", "user", "completed"), ("completed", "system", "completed")]
    assert state.history[5].reason.startswith("spec 2 failed")
    assert all(h.at.tzinfo is not None for h in state.history)
    export_plan(two, "aoi", plan_id, tmp_path / "out")
    assert (tmp_path / "out" / plan_id / "approval.json").is_file()


def test_a_stale_save_from_another_connection_is_refused(
    stores: tuple[SqlStore, SqlStore], workspace: Path
) -> None:
    one, two = stores
    plan_id = PlanService(one, "aoi", workspace).propose("t", "c").plan_id
    read_by_two = two.get_plan("aoi", plan_id)
    PlanService(one, "aoi", workspace).set_action_specs(plan_id, [{"kind": "mkdir",
                                                                  "path": "d"}])

    class Stale:
        """Hands out the plan as connection two read it, before connection one's change."""

        def __getattr__(self, name: str) -> object:
            return getattr(two, name)

        def get_plan(self, persona: str, wanted: str) -> object:
            return read_by_two

    late = PlanService(Stale(), "aoi", workspace)  # type: ignore[arg-type]
    with pytest.raises(PlanConcurrencyError):
        late.set_action_specs(plan_id, [{"kind": "mkdir", "path": "other"}])
    assert [s.base.path for s in one.get_plan("aoi", plan_id).state.action_specs] == ["d"]
