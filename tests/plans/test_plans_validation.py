"""Validation and preflight in a real workspace: normalized paths; `..`, absolute paths and
symbolic links out refused; forbidden extensions and protected names; size limits; risks;
run allow-lists; specs checked against what earlier specs will have done."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from saimemory.base import MessageStore
from sea.engine.plans import PlanPolicy, PlanService, ValidationReport
from sea.errors import PlanApprovalError
from tests.plans.conftest import PYTHON_ONLY, MakeService, python_command


def check(service: PlanService, *specs: Mapping[str, object]) -> ValidationReport:
    plan_id = service.propose("t", "c").plan_id
    return service.set_action_specs(plan_id, list(specs))


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("../outside/secret.txt", "leaves the workspace: '..'"),
        ("notes/../../outside/x.md", "leaves the workspace: '..'"),
        ("notes/../a.md", "is refused: '..'"),
        ("/etc/passwd", "absolute paths are not allowed"),
        ("a\x00b", "NUL"),
    ],
)
def test_paths_leaving_the_workspace_are_refused(
    service: PlanService, outside: Path, path: str, problem: str
) -> None:
    report = check(service, {"kind": "write", "path": path, "content": "x"})
    assert not report.ok and len(report.issues) == 1
    assert problem in report.issues[0] and report.issues[0].startswith("spec 1 (write ")
    assert report.normalized[0].validated is False
    assert problem in report.normalized[0].notes


def test_symbolic_links_out_are_refused_and_links_inside_followed(
    service: PlanService, workspace: Path, outside: Path
) -> None:
    (workspace / "out").symlink_to(outside)
    (workspace / "secret.txt").symlink_to(outside / "secret.txt")
    (workspace / "real").mkdir()
    (workspace / "inside").symlink_to(workspace / "real")
    (workspace / "nowhere").symlink_to(workspace / "missing-target")
    report = check(
        service,
        {"kind": "write", "path": "out/new.txt", "content": "x"},
        {"kind": "write", "path": "secret.txt", "content": "x"},
        {"kind": "read", "path": "out/secret.txt"},
        {"kind": "create", "path": "inside/new.txt", "content": "x"},
        {"kind": "create", "path": "nowhere", "content": "x"},
    )
    oks = [spec.validated for spec in report.normalized]
    assert oks == [False, False, False, True, False]
    assert "symbolic link to a place outside" in report.issues[0]
    assert "symbolic link to a place outside" in report.issues[1]
    assert "symbolic link that leads nowhere" in report.issues[3]
    assert report.normalized[3].base.path == "inside/new.txt"


def test_paths_are_normalized(service: PlanService) -> None:
    report = check(service, {"kind": "create", "path": " ./notes//a.md ", "content": "x"},
                   {"kind": "mkdir", "path": "docs/"}, {"kind": "analyze", "path": ""})
    assert report.ok, report.issues
    assert [s.base.path for s in report.normalized] == ["notes/a.md", "docs", "."]


def test_forbidden_extensions_and_protected_names(
    make_service: MakeService, workspace: Path
) -> None:
    (workspace / "tool.EXE").write_bytes(b"MZ")
    (workspace / ".git").mkdir()
    service = make_service()
    report = check(service,
                   {"kind": "create", "path": "run.exe", "content": "x"},
                   {"kind": "delete", "path": "tool.EXE"},
                   {"kind": "read", "path": "keys/id.pem"},
                   {"kind": "create", "path": ".git/config", "content": "x"},
                   {"kind": "create", "path": "notes.txt", "content": "x"})
    assert [s.validated for s in report.normalized] == [False, False, False, False, True]
    assert "files ending in .exe are forbidden" in report.issues[0]
    assert "files ending in .exe are forbidden" in report.issues[1]
    assert ".pem are forbidden" in report.issues[2]
    assert "goes through .git" in report.issues[3]
    custom = make_service(PlanPolicy(forbidden_extensions=frozenset({".txt"}),
                                     protected_names=frozenset()))
    again = check(custom, {"kind": "create", "path": "notes.txt", "content": "x"},
                  {"kind": "create", "path": ".git/config", "content": "x"})
    assert [s.validated for s in again.normalized] == [False, True]


def test_sizes_and_risks(make_service: MakeService, workspace: Path) -> None:
    policy = PlanPolicy(max_content_bytes=100, large_file_bytes=50, medium_content_bytes=20,
                        max_read_bytes=60)
    (workspace / "small.txt").write_text("s\n")
    (workspace / "big.txt").write_text("b" * 70)
    (workspace / "empty").mkdir()
    service = make_service(policy)
    report = check(
        service,
        {"kind": "create", "path": "tiny.txt", "content": "x" * 19},
        {"kind": "create", "path": "mid.txt", "content": "x" * 20},
        {"kind": "create", "path": "huge.txt", "content": "x" * 101},
        {"kind": "write", "path": "small.txt", "content": "y"},
        {"kind": "read", "path": "big.txt"},
        {"kind": "write", "path": "big.txt", "content": "y"},
        {"kind": "delete", "path": "empty"},
        {"kind": "mkdir", "path": "docs"},
        {"kind": "write", "path": "new.txt", "content": "z"},
    )
    by_id = {s.id: s for s in report.normalized}
    assert [s.validated for s in report.normalized] == [
        True, True, False, True, False, True, True, True, True]
    assert "content has 101 bytes, over the limit of 100" in report.issues[0]
    assert "over the read limit of 60" in report.issues[1]
    assert [by_id[i].risk for i in ("1", "2", "4", "6", "7", "8", "9")] == [
        "low", "medium", "medium", "high", "high", "low", "low"]
    assert by_id["4"].preflight is not None and by_id["4"].preflight.overwrite
    assert by_id["4"].preflight.exists and not by_id["1"].preflight.exists  # type: ignore[union-attr]


def test_run_needs_an_allow_list(make_service: MakeService) -> None:
    command = python_command("print('hi')")
    without = check(make_service(), {"kind": "run", "content": command})
    assert not without.ok
    assert "need the host's allow-list of commands, and none is set" in without.issues[0]
    other = check(make_service(PlanPolicy(run_allowlist=frozenset({"pytest"}))),
                  {"kind": "run", "content": command})
    assert "is not on the host's allow-list (pytest)" in other.issues[0]
    allowed = check(make_service(PYTHON_ONLY), {"kind": "run", "content": command},
                    {"kind": "run", "content": "'unclosed"}, {"kind": "run", "content": ""},
                    {"kind": "run", "path": "missing", "content": command})
    assert [s.validated for s in allowed.normalized] == [True, False, False, False]
    assert allowed.normalized[0].risk == "high"
    assert "cannot be split into words" in allowed.issues[0]
    assert "run needs content" in allowed.issues[1]
    assert "working folder (path) is not an existing folder" in allowed.issues[2]


def test_specs_see_what_earlier_specs_will_have_done(
    service: PlanService, workspace: Path
) -> None:
    (workspace / "old.txt").write_text("old\n")
    (workspace / "full").mkdir()
    (workspace / "full" / "f.txt").write_text("f")
    report = check(
        service,
        {"kind": "create", "path": "notes/a.md", "content": "a\n"},
        {"kind": "read", "path": "notes/a.md"},
        {"kind": "create", "path": "notes/a.md", "content": "again"},
        {"kind": "delete", "path": "old.txt"},
        {"kind": "read", "path": "old.txt"},
        {"kind": "delete", "path": "full"},
        {"kind": "delete", "path": "full/f.txt"},
        {"kind": "delete", "path": "full"},
        {"kind": "mkdir", "path": "notes/a.md/sub"},
        {"kind": "write", "path": "notes", "content": "x"},
    )
    assert [s.validated for s in report.normalized] == [
        True, True, False, True, False, False, True, True, False, False]
    assert "already exists (made by spec 1)" in report.issues[0]
    assert "no such file in the workspace (deleted by spec 4)" in report.issues[1]
    assert "folder is not empty" in report.issues[2]
    assert "'notes/a.md' will be a file (made by spec 1), not a folder" in report.issues[3]
    assert "the path is a folder, not a file to write" in report.issues[4]


def test_malformed_specs_store_nothing_of_them(service: PlanService) -> None:
    plan_id = service.propose("t", "c").plan_id
    assert service.set_action_specs(
        plan_id, [{"kind": "create", "path": "a", "content": "a"}]).ok
    report = service.set_action_specs(plan_id, [
        {"kind": "rm", "path": "a"}, {"kind": "write", "path": "a", "contents": "x"},
        {"kind": "write", "path": 3}, "not a spec",  # type: ignore[list-item]
    ])
    assert not report.ok and report.normalized == ()
    assert report.issues == (
        "spec 1: kind must be one of create, write, mkdir, read, analyze, run, delete, "
        "got 'rm'",
        "spec 2: unknown field(s) contents; a spec has kind, path, content, description, "
        "optional",
        "spec 3: path has the wrong type (int)",
        "spec 4: a spec must be an object with kind, path, content, description, optional, "
        "got 'not a spec'",
    )
    state = service.get_state(plan_id)
    assert state.status == "pending_review"
    assert [s.base.path for s in state.action_specs] == ["a"]
    assert not service.set_action_specs(plan_id, []).ok


def test_too_many_specs(make_service: MakeService) -> None:
    service = make_service(PlanPolicy(max_specs=2))
    report = check(service, *({"kind": "mkdir", "path": f"d{i}"} for i in range(3)))
    assert report.issues == ("3 specs, more than the limit of 2",)


def test_previews_give_unified_diffs_files_and_a_risk_score(
    service: PlanService, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("one\ntwo\nthree\n")
    plan_id = service.propose("t", "c").plan_id
    service.set_action_specs(plan_id, [
        {"kind": "write", "path": "notes.md", "content": "one\n2\nthree\nfour\n"},
        {"kind": "create", "path": "new/b.md", "content": "b\n"},
        {"kind": "read", "path": "notes.md"},
    ])
    preview = service.preview(plan_id)
    assert preview.files == ("notes.md", "new/b.md")
    assert preview.risk_score == pytest.approx(0.4)
    first = preview.diffs[0]
    assert (first.added, first.removed) == (2, 1)
    assert first.diff == ("--- a/notes.md\n+++ b/notes.md\n@@ -1,3 +1,4 @@\n one\n-two\n"
                          "+2\n three\n+four\n")
    assert preview.diffs[1].diff == "--- /dev/null\n+++ b/new/b.md\n@@ -0,0 +1 @@\n+b\n"
    assert preview.diffs[2].diff == ""
    assert service.get_state(plan_id).previews == preview
    only_new = service.preview(plan_id, {"ids": ["2"]})
    assert only_new.files == ("new/b.md",) and only_new.risk_score == pytest.approx(0.1)


def test_long_diffs_are_cut(make_service: MakeService) -> None:
    service = make_service(PlanPolicy(max_diff_chars=50))
    plan_id = service.propose("t", "c").plan_id
    service.set_action_specs(plan_id, [{"kind": "create", "path": "a.txt",
                                        "content": "line\n" * 40}])
    diff = service.preview(plan_id).diffs[0]
    assert diff.truncated and diff.added == 40
    assert diff.diff.startswith("--- /dev/null") and "diff cut at 50 of" in diff.diff


def test_approval_needs_valid_specs_and_a_real_selection(service: PlanService) -> None:
    plan_id = service.propose("t", "c").plan_id
    service.set_action_specs(plan_id, [{"kind": "write", "path": "../x", "content": "x"}])
    with pytest.raises(PlanApprovalError, match="did not pass validation"):
        service.request_approval(plan_id, {"all": True})
    with pytest.raises(PlanApprovalError, match="did not pass validation"):
        service.approve(plan_id, "ken", {"all": True})
    service.set_action_specs(plan_id, [{"kind": "mkdir", "path": "a"},
                                       {"kind": "mkdir", "path": "b"}])
    with pytest.raises(PlanApprovalError, match=r"names spec id\(s\) 7 the plan does not"):
        service.approve(plan_id, "ken", {"ids": ["1", "7"]})
    with pytest.raises(PlanApprovalError, match="names no spec"):
        service.approve(plan_id, "ken", {"ids": []})
    with pytest.raises(PlanApprovalError, match="a selection is"):
        service.approve(plan_id, "ken", {"some": True})
    with pytest.raises(PlanApprovalError, match="approver's name"):
        service.approve(plan_id, " ", {"all": True})
    assert service.get_state(plan_id).status == "pending_review"


def test_special_files_are_never_targets(service: PlanService, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    report = check(service, {"kind": "read", "path": "pipe"},
                   {"kind": "write", "path": "pipe", "content": "x"})
    assert [s.validated for s in report.normalized] == [False, False]
    assert "special file" in report.issues[0] and "special file" in report.issues[1]


def test_the_stored_specs_are_the_normalized_ones(
    service: PlanService, store: MessageStore
) -> None:
    plan_id = service.propose("t", "c").plan_id
    report = service.set_action_specs(plan_id, [{"kind": "create", "path": "./a//b.txt",
                                                 "content": "b"}])
    assert store.get_plan("aoi", plan_id).state.action_specs == report.normalized
    assert report.normalized[0].id == "1" and report.normalized[0].base.path == "a/b.txt"
