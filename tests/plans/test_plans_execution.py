"""Execution in a real workspace: only approved specs, in order, atomically; conflicts
when a diff changed since approval; abort and the remainder; run without a shell, with an
allow-list and a timeout; nothing ever written outside the workspace; events."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from saimemory.base import MessageStore
from saimemory.plans import Plan
from sea.engine.plans import PlanEvent, PlanPolicy, PlanService, first_step_id, fsops
from sea.errors import PlanApprovalError, PlanConcurrencyError, PlanNotFound
from tests.plans.conftest import PYTHON_ONLY, SECRET, MakeService, python_command


def approved_plan(service: PlanService, specs: list[dict[str, Any]],
                  selection: dict[str, Any] | None = None) -> str:
    plan_id = service.propose("t", "c").plan_id
    report = service.set_action_specs(plan_id, specs)
    assert report.ok, report.issues
    service.request_approval(plan_id, selection or {"all": True})
    service.approve(plan_id, "ken", selection or {"all": True})
    return plan_id


def files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_the_whole_path(
    make_service: MakeService, workspace: Path, events: list[PlanEvent]
) -> None:
    (workspace / "old.md").write_text("old\n")
    (workspace / "keep.md").write_text("keep\n")
    service = make_service()
    made = service.propose("Outline", "1. outline 2. tidy", rationale="asked",
                           sources=[{"message_id": "12", "timestamp": "2025-01-01T00:00:00Z"}],
                           tags=["game"])
    assert made.first_step_id is None  # no step yet
    specs = [
        {"kind": "mkdir", "path": "notes"},
        {"kind": "create", "path": "notes/outline.md", "content": "# Outline\n"},
        {"kind": "write", "path": "keep.md", "content": "kept and changed\n"},
        {"kind": "read", "path": "notes/outline.md"},
        {"kind": "delete", "path": "old.md"},
        {"kind": "analyze", "description": "think about it"},
    ]
    report = service.set_action_specs(made.plan_id, specs)
    assert report.ok
    assert first_step_id(made.plan_id, report.normalized) == f"{made.plan_id}:1"
    request = service.request_approval(made.plan_id)
    assert request.spec_ids == ("1", "2", "3", "4", "5", "6")
    assert request.high_risk == ("5",) and request.needs_person
    service.approve(made.plan_id, "ken", {"all": True})
    result = service.execute(made.plan_id)
    assert result.overall_success and result.outcome == "completed"
    assert result.status == "completed" == service.get_state(made.plan_id).status
    assert [r.spec_id for r in result.results] == ["1", "2", "3", "4", "5", "6"]
    assert all(r.ok for r in result.results) and result.remaining == ()
    assert result.results[3].output == "# Outline\n"
    assert result.started_at <= result.finished_at
    assert files(workspace) == {"keep.md": "kept and changed\n",
                                "notes/outline.md": "# Outline\n"}
    assert [(e.kind, e.actor, e.status) for e in events] == [
        ("plan_proposed", "ai", "proposed"),
        ("specs_set", "ai", "pending_review"),
        ("approval_requested", "ai", "pending_review"),
        ("approved", "user", "approved"),
        ("executed", "user", "completed"),
        ("completed", "system", "completed"),
    ]
    assert events[1].counts == {"specs": 6, "files": 4, "issues": 0}
    assert events[2].risk_score == 1.0 and events[2].counts["selected"] == 6
    assert events[4].counts == {"specs": 6, "files": 4, "ran": 6, "succeeded": 6, "failed": 0}
    assert events[4].risk_score == 1.0
    assert events[0].to_json()["kind"] == "plan_proposed"
    assert "plan_proposed by ai" in events[0].describe()


def test_a_partial_selection_runs_only_the_selected_specs(
    service: PlanService, workspace: Path
) -> None:
    plan_id = approved_plan(service, [
        {"kind": "create", "path": "a.txt", "content": "a"},
        {"kind": "create", "path": "b.txt", "content": "b"},
        {"kind": "create", "path": "c.txt", "content": "c"},
    ], {"ids": ["3", "1"]})
    result = service.execute(plan_id)
    assert [r.spec_id for r in result.results] == ["1", "3"], "selected ones, in plan order"
    assert files(workspace) == {"a.txt": "a", "c.txt": "c"}
    assert result.overall_success


def test_a_file_changed_after_approval_is_a_conflict(
    service: PlanService, workspace: Path, events: list[PlanEvent]
) -> None:
    (workspace / "notes.md").write_text("v1\n")
    plan_id = approved_plan(service, [
        {"kind": "create", "path": "first.txt", "content": "first"},
        {"kind": "write", "path": "notes.md", "content": "v2 from the plan\n"},
    ])
    (workspace / "notes.md").write_text("v1, edited by the user\n")
    result = service.execute(plan_id)
    assert (result.outcome, result.overall_success, result.status) == (
        "conflict", False, "pending_review")
    assert [(c.spec_id, c.path) for c in result.conflicts] == [("2", "notes.md")]
    assert "changed since the approval" in result.conflicts[0].detail
    assert result.results == () and result.remaining == ("1", "2")
    assert files(workspace) == {"notes.md": "v1, edited by the user\n"}, "nothing ran"
    state = service.get_state(plan_id)
    assert state.status == "pending_review" and state.previews is not None
    assert "-v1, edited by the user" in state.previews.diffs[1].diff
    assert events[-1].kind == "conflict" and events[-1].counts["conflicts"] == 1
    request = service.request_approval(plan_id, {"all": True})
    assert "-v1, edited by the user" in request.preview.diffs[1].diff
    service.approve(plan_id, "ken", {"all": True})
    assert service.execute(plan_id).overall_success
    assert files(workspace) == {"first.txt": "first", "notes.md": "v2 from the plan\n"}


def test_a_target_taken_after_approval_is_a_conflict(
    service: PlanService, workspace: Path
) -> None:
    plan_id = approved_plan(service, [{"kind": "create", "path": "a.txt", "content": "plan"}])
    (workspace / "a.txt").write_text("someone else's")
    result = service.execute(plan_id)
    assert result.outcome == "conflict"
    assert "no longer valid: the path already exists" in result.conflicts[0].detail
    assert (workspace / "a.txt").read_text() == "someone else's"


def test_an_unchanged_workspace_is_no_conflict(service: PlanService, workspace: Path) -> None:
    (workspace / "n.md").write_text("same\n")
    plan_id = approved_plan(service, [{"kind": "write", "path": "n.md", "content": "new\n"}])
    os.utime(workspace / "n.md", (0, 0))  # touched, not changed
    assert service.execute(plan_id).outcome == "completed"


def test_approval_is_refused_when_the_diff_changed_since_it_was_shown(
    service: PlanService, workspace: Path
) -> None:
    (workspace / "n.md").write_text("one\n")
    plan_id = service.propose("t", "c").plan_id
    service.set_action_specs(plan_id, [{"kind": "write", "path": "n.md", "content": "two\n"}])
    service.request_approval(plan_id, {"all": True})
    (workspace / "n.md").write_text("one and a half\n")
    with pytest.raises(PlanApprovalError, match=r"spec\(s\) 1 of plan .* changed since they "
                       "were shown for approval"):
        service.approve(plan_id, "ken", {"all": True})
    assert service.get_state(plan_id).status == "pending_review"
    service.request_approval(plan_id, {"all": True})
    assert service.approve(plan_id, "ken", {"all": True}).status == "approved"


def test_abort_then_execute_the_remainder(
    make_service: MakeService, workspace: Path, events: list[PlanEvent]
) -> None:
    service = make_service(PYTHON_ONLY)
    check_ok = python_command(
        "import os, sys; print('checking'); sys.exit(0 if os.path.exists('ok') else 3)")
    plan_id = approved_plan(service, [
        {"kind": "create", "path": "a.txt", "content": "a"},
        {"kind": "run", "content": check_ok},
        {"kind": "create", "path": "b.txt", "content": "b"},
    ])
    first = service.execute(plan_id)
    assert (first.outcome, first.status, first.overall_success) == ("aborted", "aborted", False)
    assert [(r.spec_id, r.ok, r.exit_code) for r in first.results] == [
        ("1", True, None), ("2", False, 3)]
    assert first.results[1].output == "checking\n"
    assert first.remaining == ("2", "3")
    assert files(workspace) == {"a.txt": "a"}
    assert events[-1].kind == "aborted" and "spec 2 failed" in events[-1].reason
    assert events[-1].counts["remaining"] == 2
    (workspace / "ok").touch()
    second = service.execute(plan_id)
    assert second.outcome == "completed" and second.overall_success
    assert [r.spec_id for r in second.results] == ["2", "3"], "only the remainder ran"
    assert files(workspace) == {"a.txt": "a", "b.txt": "b", "ok": ""}
    history = service.get_state(plan_id).results
    assert [(r.spec_id, r.ok) for r in history] == [
        ("1", True), ("2", False), ("2", True), ("3", True)]


def test_an_aborted_run_can_be_approved_again_for_part_of_the_rest(
    make_service: MakeService, workspace: Path
) -> None:
    service = make_service(PYTHON_ONLY)
    plan_id = approved_plan(service, [
        {"kind": "run", "content": python_command("raise SystemExit(1)")},
        {"kind": "create", "path": "b.txt", "content": "b"},
    ])
    assert service.execute(plan_id).outcome == "aborted"
    service.approve(plan_id, "ken", {"ids": ["2"]})
    result = service.execute(plan_id)
    assert [r.spec_id for r in result.results] == ["2"] and result.overall_success


def test_an_optional_spec_may_fail(make_service: MakeService, workspace: Path) -> None:
    service = make_service(PYTHON_ONLY)
    plan_id = approved_plan(service, [
        {"kind": "run", "content": python_command("raise SystemExit(2)"), "optional": True},
        {"kind": "create", "path": "b.txt", "content": "b"},
    ])
    result = service.execute(plan_id)
    assert result.overall_success and result.status == "completed"
    assert [(r.spec_id, r.ok) for r in result.results] == [("1", False), ("2", True)]


def test_run_uses_no_shell_and_captures_output(
    make_service: MakeService, workspace: Path
) -> None:
    service = make_service(PYTHON_ONLY)
    (workspace / "sub").mkdir()
    plan_id = approved_plan(service, [
        {"kind": "run", "path": "sub",
         "content": python_command("import os, sys; print(sys.argv[1:], os.getcwd())")
         + " '$HOME' '*' '; touch pwned' '|'"},
    ])
    result = service.execute(plan_id)
    output = result.results[0].output
    assert "['$HOME', '*', '; touch pwned', '|']" in output
    assert output.rstrip().endswith(str(workspace / "sub"))
    assert result.results[0].exit_code == 0 and result.overall_success
    assert not (workspace / "pwned").exists() and not (workspace / "sub" / "pwned").exists()


def test_run_times_out(make_service: MakeService, workspace: Path) -> None:
    service = make_service(PlanPolicy(run_allowlist=PYTHON_ONLY.run_allowlist,
                                      run_timeout_s=0.5))
    plan_id = approved_plan(service, [
        {"kind": "run", "content": python_command("import time; time.sleep(30)")},
    ])
    began = time.monotonic()
    result = service.execute(plan_id)
    assert time.monotonic() - began < 10
    assert result.outcome == "aborted" and not result.results[0].ok
    assert "timed out after 0.5s and was stopped" in result.results[0].message


def test_run_output_is_cut(make_service: MakeService) -> None:
    service = make_service(PlanPolicy(run_allowlist=PYTHON_ONLY.run_allowlist,
                                      max_output_chars=10))
    plan_id = approved_plan(service, [
        {"kind": "run", "content": python_command("print('x' * 100)")}])
    output = service.execute(plan_id).results[0].output
    assert output.startswith("x" * 10 + "\n… (cut at 10 of 101 characters)")


def test_a_folder_swapped_for_a_link_out_is_never_written_through(
    service: PlanService, workspace: Path, outside: Path
) -> None:
    (workspace / "sub").mkdir()
    plan_id = approved_plan(service, [{"kind": "create", "path": "sub/new.txt",
                                       "content": "x"}])
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(outside)
    result = service.execute(plan_id)
    assert result.outcome == "conflict"
    assert "leaves the workspace" in result.conflicts[0].detail
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET


def test_file_operations_never_follow_a_link_on_the_way(
    workspace: Path, outside: Path
) -> None:
    (workspace / "sub").symlink_to(outside)
    with pytest.raises(fsops.FsError, match="symbolic link or not a folder"):
        fsops.write_file(workspace, ("sub", "new.txt"), b"x", exclusive=False)
    with pytest.raises(fsops.FsError, match="symbolic link or not a folder"):
        fsops.make_dirs(workspace, ("sub", "deeper"))
    with pytest.raises(fsops.FsError, match="symbolic link or not a folder"):
        fsops.remove(workspace, ("sub", "secret.txt"))
    with pytest.raises(fsops.FsError):
        fsops.read_bytes(workspace, ("sub", "secret.txt"), 1000)
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(fsops.FsError, match="not a regular file"):
        fsops.write_file(workspace, ("link.txt",), b"x", exclusive=False)
    fsops.remove(workspace, ("link.txt",))
    assert not (workspace / "link.txt").is_symlink()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET


def test_writes_are_atomic_and_keep_the_mode(service: PlanService, workspace: Path) -> None:
    target = workspace / "script.sh.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    before = os.stat(target).st_ino
    plan_id = approved_plan(service, [{"kind": "write", "path": "script.sh.txt",
                                       "content": "new\n"}])
    assert service.execute(plan_id).overall_success
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert os.stat(target).st_ino != before, "replaced by a rename, not rewritten in place"
    assert sorted(p.name for p in workspace.iterdir()) == ["script.sh.txt"], "no temp files"


def test_create_never_replaces_a_file_that_appeared(workspace: Path) -> None:
    (workspace / "a.txt").write_text("theirs")
    with pytest.raises(fsops.FsError, match="already exists"):
        fsops.write_file(workspace, ("a.txt",), b"mine", exclusive=True)
    assert (workspace / "a.txt").read_text() == "theirs"
    assert sorted(p.name for p in workspace.iterdir()) == ["a.txt"]


def test_automatic_approval_follows_the_policy(make_service: MakeService,
                                               workspace: Path) -> None:
    (workspace / "gone.txt").write_text("x")
    strict = make_service()
    plan_id = strict.propose("t", "c").plan_id
    strict.set_action_specs(plan_id, [{"kind": "mkdir", "path": "d"}])
    with pytest.raises(PlanApprovalError, match="allows no automatic approval"):
        strict.approve(plan_id, "policy", {"all": True}, actor="system")
    lenient = make_service(PlanPolicy(auto_approve_up_to="low"))
    assert lenient.request_approval(plan_id).needs_person is False
    assert lenient.approve(plan_id, "policy", {"all": True}, actor="system").status == "approved"
    assert lenient.get_state(plan_id).approvals[-1].actor == "system"
    risky = lenient.propose("t", "c").plan_id
    lenient.set_action_specs(risky, [{"kind": "create", "path": "m.txt", "content": "x" * 5000},
                                     {"kind": "delete", "path": "gone.txt"}])
    assert lenient.request_approval(risky).needs_person is True
    with pytest.raises(PlanApprovalError, match=r"high-risk spec\(s\) 2 always need a person"):
        lenient.approve(risky, "policy", {"all": True}, actor="ai")
    with pytest.raises(PlanApprovalError, match="only up to low risk"):
        lenient.approve(risky, "policy", {"ids": ["1"]}, actor="system")
    assert lenient.approve(risky, "ken", {"all": True}).status == "approved"


def test_abort_recovers_a_run_that_died(
    service: PlanService, store: MessageStore, workspace: Path
) -> None:
    plan_id = approved_plan(service, [{"kind": "create", "path": "a.txt", "content": "a"},
                                      {"kind": "create", "path": "b.txt", "content": "b"}])
    plan = store.get_plan("aoi", plan_id)
    store.save_plan(replace(plan, state=replace(plan.state, status="executing")))
    assert service.abort(plan_id, "the process died").status == "aborted"
    result = service.execute(plan_id)
    assert result.overall_success and [r.spec_id for r in result.results] == ["1", "2"]


class RacingStore:
    """A store through which someone else saves the plan right after each read of it."""

    def __init__(self, store: MessageStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def get_plan(self, persona: str, plan_id: str) -> Plan:
        found = self.store.get_plan(persona, plan_id)
        self.store.save_plan(found)
        return found


def test_a_change_made_meanwhile_wins_and_this_call_saves_nothing(
    make_service: MakeService, store: MessageStore
) -> None:
    plain = make_service()
    plan_id = plain.propose("t", "c").plan_id
    racing = make_service(store=RacingStore(store))
    with pytest.raises(PlanConcurrencyError, match="changed by someone else") as info:
        racing.set_action_specs(plan_id, [{"kind": "mkdir", "path": "d"}])
    assert info.value.code == "SEA586"
    assert plain.get_state(plan_id).status == "proposed"


def test_current_plan_list_and_clear(service: PlanService) -> None:
    assert service.get_current() is None and service.list() == []
    first = service.propose("first", "c").plan_id
    second = service.propose("second", "c").plan_id
    current = service.get_current()
    assert current is not None and (current.plan_id, current.title) == (second, "second")
    assert current.is_current and current.status == "proposed" and current.spec_count == 0
    listed = service.list()
    assert [(r.plan_id, r.is_current) for r in listed] == [(second, True), (first, False)]
    assert service.list(status="approved") == []
    service.clear_current()
    assert service.get_current() is None
    assert [r.is_current for r in service.list()] == [False, False]
    with pytest.raises(PlanNotFound, match="has no plan 'nope'"):
        service.get_state("nope")


def test_another_personas_plan_is_not_found(make_service: MakeService) -> None:
    plan_id = make_service().propose("t", "c").plan_id
    other = make_service(persona="ken")
    with pytest.raises(PlanNotFound):
        other.execute(plan_id)
    assert other.get_current() is None


@pytest.fixture
def no_dir_fd(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(fsops, "supported", lambda: False)
    yield


def test_execution_needs_posix(service: PlanService, no_dir_fd: None) -> None:
    plan_id = approved_plan(service, [{"kind": "mkdir", "path": "d"}])
    with pytest.raises(Exception, match="needs a POSIX system"):
        service.execute(plan_id)
    assert service.get_state(plan_id).status == "approved"
