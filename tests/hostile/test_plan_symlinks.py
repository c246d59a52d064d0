"""Attacks with planted symbolic links: a plan's ``delete`` of a link must not delete the
link's target, and ``sea plan export`` must not follow a link planted in its output
directory (to write, or delete old diffs, elsewhere)."""

from __future__ import annotations

from pathlib import Path

import pytest

from saimemory.sqlite import SQLiteStore
from sea.engine.plans import PlanService
from sea.errors import PlanApprovalError
from tests.trace.conftest import Sea
from tests.trace.conftest import sea as sea  # the fixture
from tests.trace.test_cli_plans import db, planned

PRECIOUS = "years of notes\n"


def test_delete_of_a_symbolic_link_never_deletes_its_target(store: SQLiteStore,
                                                            tmp_path: Path) -> None:
    (tmp_path / "precious.md").write_text(PRECIOUS)
    (tmp_path / "old-link.md").symlink_to("precious.md")
    service = PlanService(store, "aoi", tmp_path)
    plan_id = service.propose("tidy", "remove a stale link").plan_id
    report = service.set_action_specs(plan_id, [{"kind": "delete", "path": "old-link.md"}])
    assert not report.ok
    (issue,) = report.issues
    assert "symbolic link" in issue and "precious.md" in issue
    with pytest.raises(PlanApprovalError, match="did not pass validation"):
        service.approve(plan_id, "ken", {"all": True})
    assert (tmp_path / "precious.md").read_text() == PRECIOUS


def test_a_link_planted_after_the_approval_is_a_conflict(store: SQLiteStore,
                                                         tmp_path: Path) -> None:
    (tmp_path / "precious.md").write_text(PRECIOUS)
    (tmp_path / "stale.md").write_text(PRECIOUS)
    service = PlanService(store, "aoi", tmp_path)
    plan_id = service.propose("tidy", "remove a stale copy").plan_id
    assert service.set_action_specs(plan_id, [{"kind": "delete", "path": "stale.md"}]).ok
    service.approve(plan_id, "ken", {"all": True})
    (tmp_path / "stale.md").unlink()
    (tmp_path / "stale.md").symlink_to("precious.md")
    result = service.execute(plan_id)
    assert result.outcome == "conflict"
    assert (tmp_path / "precious.md").read_text() == PRECIOUS


def _export_into(sea: Sea) -> tuple[str, Path, Path]:
    db(sea).parent.mkdir(parents=True, exist_ok=True)
    plan_id = planned(sea)
    out = sea.root / "out"
    out.mkdir()
    victim = sea.root / "victim"
    victim.mkdir()
    (victim / "keep.diff").write_text("mine\n")
    (victim / "index.json").write_text("mine\n")
    return plan_id, out, victim


@pytest.mark.parametrize("planted", ["plan", "preview", "index"])
def test_sea_plan_export_does_not_follow_a_planted_link(sea: Sea, planted: str) -> None:
    plan_id, out, victim = _export_into(sea)
    if planted == "plan":
        (out / plan_id).symlink_to(victim, target_is_directory=True)
    elif planted == "preview":
        (out / plan_id).mkdir()
        (out / plan_id / "preview").symlink_to(victim, target_is_directory=True)
    else:
        (out / "index.json").symlink_to(victim / "index.json")
    done = sea("plan", "export", plan_id, "-o", str(out))
    assert done.code == 1, done.out
    assert "symbolic link" in done.err and "Traceback" not in done.err
    assert sorted(p.name for p in victim.iterdir()) == ["index.json", "keep.diff"]
    assert (victim / "keep.diff").read_text() == "mine\n"
    assert (victim / "index.json").read_text() == "mine\n"


def test_sea_plan_export_writes_its_files_when_nothing_is_planted(sea: Sea) -> None:
    plan_id, out, _ = _export_into(sea)
    (out / plan_id / "preview").mkdir(parents=True)
    (out / plan_id / "preview" / "9.diff").write_text("old\n")
    done = sea("plan", "export", plan_id, "-o", str(out))
    assert done.code == 0, done.err
    assert (out / plan_id / "plan.json").is_file() and (out / "index.json").is_file()
    assert sorted(p.name for p in (out / plan_id / "preview").iterdir()) == ["2.diff"]
