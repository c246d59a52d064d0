"""Attack on a plan's preview with a large file: a ``write`` whose old and new texts differ
on every other line made the line diff quadratic (minutes for a file well under the size
limits). The diff work is bounded by ``PlanPolicy.max_diff_lines``: beyond it the preview
says so and counts the lines instead."""

from __future__ import annotations

from pathlib import Path

from saimemory.sqlite import SQLiteStore
from sea.engine.plans import PlanPolicy, PlanService

LINES = 20_000


def _texts(lines: int) -> tuple[str, str]:
    old = "".join(f"line {i}\n" for i in range(lines))
    new = "".join(f"line {i}\n" if i % 2 else f"changed {i}\n" for i in range(lines))
    return old, new


def test_the_preview_of_a_large_rewrite_is_bounded(store: SQLiteStore, tmp_path: Path) -> None:
    old, new = _texts(LINES)
    (tmp_path / "big.txt").write_text(old)
    service = PlanService(store, "aoi", tmp_path)
    plan_id = service.propose("rewrite", "every other line").plan_id
    report = service.set_action_specs(plan_id, [{"kind": "write", "path": "big.txt",
                                                 "content": new}])
    assert report.ok, report.issues
    (diff,) = service.preview(plan_id).diffs
    limit = PlanPolicy().max_diff_lines
    assert diff.truncated and f"over the limit of {limit}" in diff.diff
    assert len(diff.diff) <= PlanPolicy().max_diff_chars
    assert (diff.added, diff.removed) == (LINES // 2, LINES // 2)
    summary = report.normalized[0].preflight
    assert summary is not None and summary.diff_summary.startswith("+10000 -10000 lines")
    assert "no line diff: the changed part has 39998 lines" in diff.diff
    service.approve(plan_id, "ken", {"all": True})
    assert service.execute(plan_id).outcome == "completed"
    assert (tmp_path / "big.txt").read_text() == new


def test_an_edit_of_a_large_file_keeps_its_line_diff(store: SQLiteStore,
                                                     tmp_path: Path) -> None:
    old, _ = _texts(LINES)
    new = old.replace("line 10000\n", "line ten thousand\n")
    (tmp_path / "big.txt").write_text(old)
    service = PlanService(store, "aoi", tmp_path)
    plan_id = service.propose("edit", "one line").plan_id
    assert service.set_action_specs(plan_id, [{"kind": "write", "path": "big.txt",
                                               "content": new}]).ok
    (diff,) = service.preview(plan_id).diffs
    assert not diff.truncated and (diff.added, diff.removed) == (1, 1)
    assert "@@ -9998,7 +9998,7 @@" in diff.diff
    assert "-line 10000\n+line ten thousand\n" in diff.diff


def test_the_limit_can_be_raised(store: SQLiteStore, tmp_path: Path) -> None:
    old, new = _texts(200)
    (tmp_path / "small.txt").write_text(old)
    for limit, cut in ((100, True), (400, False)):
        service = PlanService(store, "aoi", tmp_path, PlanPolicy(max_diff_lines=limit))
        plan_id = service.propose("rewrite", "every other line").plan_id
        assert service.set_action_specs(plan_id, [{"kind": "write", "path": "small.txt",
                                                   "content": new}]).ok
        (diff,) = service.preview(plan_id).diffs
        assert diff.truncated is cut and (diff.added, diff.removed) == (100, 100)
        assert ("-line 0\n+changed 0\n" in diff.diff) is not cut
