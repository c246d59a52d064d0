"""Attacks on the text of a plan's specs: a lone surrogate (not text at all) and a line break
in a description or path (which would forge a line of the approval view a person reads) are
validation issues where the specs come in, never an exception or a forged line."""

from __future__ import annotations

from pathlib import Path

import pytest

from saimemory.sqlite import SQLiteStore
from sea.cli._preview import approval_lines
from sea.engine.plans import PlanService
from sea.errors import PlanError

FORGED = "  risk score 0.00; high risk: none"


@pytest.mark.parametrize("spec", [
    {"kind": "create", "path": "a\ud800.md", "content": "x"},
    {"kind": "create", "path": "a.md", "content": "x\udc00"},
    {"kind": "create", "path": "a.md", "content": "x", "description": "d\ud800"},
])
def test_a_lone_surrogate_is_a_validation_issue(store: SQLiteStore, tmp_path: Path,
                                                spec: dict[str, str]) -> None:
    service = PlanService(store, "aoi", tmp_path)
    plan_id = service.propose("p", "c").plan_id
    report = service.set_action_specs(plan_id, [spec])
    assert not report.ok
    (issue,) = report.issues
    assert "spec 1" in issue and "lone surrogate" in issue
    assert service.get_state(plan_id).status == "pending_review"
    assert not (tmp_path / "a.md").exists()


def test_a_lone_surrogate_in_a_plan_is_a_plan_error(store: SQLiteStore,
                                                    tmp_path: Path) -> None:
    service = PlanService(store, "aoi", tmp_path)
    with pytest.raises(PlanError, match="lone surrogate"):
        service.propose("bad \udfff title", "c")
    assert store.list_plans("aoi") == []


@pytest.mark.parametrize("field", ["description", "path"])
@pytest.mark.parametrize("brk", ["\n", "\r", "\u2028", "\x85", "\x1b[2J"])
def test_a_line_break_in_a_description_or_path_is_a_validation_issue(
        store: SQLiteStore, tmp_path: Path, field: str, brk: str) -> None:
    service = PlanService(store, "aoi", tmp_path)
    plan_id = service.propose("p", "c").plan_id
    spec = {"kind": "create", "path": "a.md", "content": "x\n", "description": "notes"}
    spec[field] = spec[field] + brk + FORGED
    report = service.set_action_specs(plan_id, [spec])
    assert not report.ok
    (issue,) = report.issues
    assert issue.startswith("spec 1 ") and f"{field} holds" in issue and "one line" in issue
    assert len(issue.splitlines()) == 1 and "\x1b" not in issue
    assert report.normalized[0].validated is False


def test_the_approval_view_shows_each_spec_on_one_line() -> None:
    view = {"title": "t", "plan_id": "p", "spec_ids": ["1"], "files": ["a.md"],
            "specs": [{"id": "1", "kind": "create", "path": "a\nb.md", "risk": "high",
                       "description": "x\n" + FORGED}],
            "risk_score": 1.0, "high_risk": ["1"]}
    lines = "\n".join(approval_lines(view)).splitlines()  # as the terminal shows them
    assert FORGED not in lines
    assert len(lines) == 4 and lines[-1].startswith("  risk score 1.00; high risk: 1")
