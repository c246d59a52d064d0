"""Plans from the command line: ``sea run`` shows a plan's preview and waits (or answers at
once with ``--approve``/``--deny``), another process finishes it with ``sea resume``, and
``sea plan`` lists, shows, previews, approves, rejects, executes and exports plans."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from saimemory.sqlite import SQLiteStore
from sea.cli._answers import terminal_asker
from sea.engine.plans import PlanService
from tests.trace.conftest import Sea

TASK = "Write the outline of my game into notes/outline.md"
OUTLINE = "# Star Garden\n1. Arrive\n"
SPECS = [{"kind": "mkdir", "path": "notes", "description": "a folder"},
         {"kind": "create", "path": "notes/outline.md", "content": OUTLINE}]
SCRIPT = {"responses": {
    "sub_router_user.decide": [{"playbook": "sub_plan", "reason": "changes a file"}],
    "sub_plan.decide": [{"step": "new"}],
    "sub_plan.draft": [{"title": "Game outline", "content": "Write it.", "specs": SPECS}],
    "sub_speak.compose": ["Done."],
}}


def workspace(sea: Sea) -> Path:
    root = sea.root / "ws"
    root.mkdir(exist_ok=True)
    return root


def run(sea: Sea, *extra: str) -> tuple[int, dict[str, Any], str]:
    done = sea("run", "--input", TASK, "--model", sea.script(SCRIPT), "--workspace",
               str(workspace(sea)), "--json", *extra)
    return done.code, orjson.loads(done.out), done.err


def db(sea: Sea) -> Path:
    return sea.root / "home" / "memory.sqlite"


def test_a_waiting_plan_is_approved_and_finished_by_another_process(sea: Sea) -> None:
    code, result, err = run(sea)
    assert code == 0, err
    assert result["status"] == "waiting" and result["spoken"] == []
    view = result["approval"]["plan_approval"]
    assert view["title"] == "Game outline" and view["files"] == ["notes", "notes/outline.md"]
    assert [e["event"] for e in result["plan_events"]] == [
        "plan_proposed", "specs_set", "approval_requested"]
    pulse = result["pulse_id"]
    assert f"sea resume {pulse}" in err and "--workspace" in err
    env = {**os.environ, "SEA_HOME": str(sea.root / "home"), "SEA_DB": str(db(sea))}
    done = subprocess.run(
        [sys.executable, "-m", "sea", "resume", pulse, "--approve", "--approver", "ken",
         "--workspace", str(workspace(sea)), "--model", sea.script(SCRIPT), "--json"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    resumed = orjson.loads(done.stdout)
    assert resumed["status"] == "ok" and resumed["spoken"] == ["Done."]
    assert [e["event"] for e in resumed["plan_events"]] == ["approved", "executed", "completed"]
    assert (workspace(sea) / "notes" / "outline.md").read_text() == OUTLINE
    store = SQLiteStore(db(sea))
    try:
        (plan,) = store.list_plans("aoi")
        assert plan.state.status == "completed"
        assert [(a.approver, a.actor) for a in plan.state.approvals] == [("ken", "user")]
    finally:
        store.close()


def test_the_terminal_shows_the_preview_of_a_waiting_plan(sea: Sea) -> None:
    done = sea("run", "--input", TASK, "--model", sea.script(SCRIPT), "--workspace",
               str(workspace(sea)))
    assert done.code == 0, done.err
    assert 'waiting for approval: plan "Game outline"' in done.err
    assert "files: notes, notes/outline.md" in done.err
    assert "2 create notes/outline.md [low] +2 -0 new file, 2 lines" in done.err
    assert "risk score 0.10; high risk: none" in done.err
    assert "plan_proposed by ai → proposed" in done.err
    assert "sea resume " in done.err


@pytest.mark.parametrize(("answer", "written"), [(("--approve", "low"), True),
                                                 (("--approve", "1"), False),
                                                 (("--deny",), False)])
def test_run_answers_at_once_for_scripts(sea: Sea, answer: tuple[str, ...],
                                         written: bool) -> None:
    code, result, err = run(sea, *answer)
    assert code == 0, err
    assert result["status"] == "ok" and result["spoken"] == ["Done."]
    assert (workspace(sea) / "notes" / "outline.md").exists() is written
    events = [e["event"] for e in result["plan_events"]]
    assert events[-1] == ("sent_back" if answer == ("--deny",) else "completed")


def test_a_bad_approve_value_is_refused(sea: Sea) -> None:
    with pytest.raises(SystemExit) as info:
        sea("run", "--input", TASK, "--approve", "everything")
    assert info.value.code == 2
    assert "expected all, low, medium, high or spec ids" in sea.capsys.readouterr().err


def test_the_terminal_asker_reads_a_person_s_answer() -> None:
    request = {"plan_approval": {"title": "t"}}
    for typed, answer in (("a\n", {"all": True}), ("l\n", {"up_to": "low"}),
                          ("1, 3\n", {"ids": ["1", "3"]}), ("d\n", {"approved": False}),
                          ("\n", None), ("", None)):
        assert terminal_asker(lambda _prompt, t=typed: t)(request) == answer


def planned(sea: Sea) -> str:
    """A plan of persona aoi, its specs set (as a pulse would leave it)."""
    store = SQLiteStore(db(sea))
    try:
        service = PlanService(store, "aoi", workspace(sea))
        plan_id = service.propose("Game outline", "Write it.").plan_id
        assert service.set_action_specs(plan_id, SPECS).ok
        return plan_id
    finally:
        store.close()


def test_sea_plan_list_show_preview_approve_execute_export(sea: Sea) -> None:
    db(sea).parent.mkdir(parents=True, exist_ok=True)
    plan_id = planned(sea)
    ws = ("--workspace", str(workspace(sea)))
    listed = sea("plan", "list")
    assert listed.code == 0 and f"* {plan_id} pending_review" in listed.out
    preview = sea("plan", "preview", *ws)
    assert preview.code == 0, preview.err
    assert "+# Star Garden" in preview.out and "risk score 0.10" in preview.out
    executed = sea("plan", "execute", plan_id, *ws)
    assert executed.code == 1 and "it is pending_review" in executed.err  # not approved
    approved = sea("plan", "approve", plan_id, "--approve", "1", "--approver", "ken", *ws)
    assert approved.code == 0, approved.err
    assert "specs 1 approved by ken" in approved.out
    executed = sea("plan", "execute", *ws, "--json")
    assert executed.code == 0, executed.err
    assert orjson.loads(executed.out)["outcome"] == "completed"
    assert (workspace(sea) / "notes").is_dir()
    assert not (workspace(sea) / "notes" / "outline.md").exists()
    shown = sea("plan", "show", plan_id)
    assert shown.code == 0
    assert "approvals (1):" in shown.out and " ken (user): specs 1" in shown.out
    for event in ("plan_proposed by ai", "specs_set by ai", "approved by user",
                  "executed by user", "completed by system"):
        assert event in shown.out, shown.out
    exported = sea("plan", "export", "-o", str(sea.root / "out"))
    assert exported.code == 0
    assert (sea.root / "out" / plan_id / "approval.json").exists()
    index = orjson.loads((sea.root / "out" / "index.json").read_bytes())
    assert [p["id"] for p in index["plans"]] == [plan_id]


def test_sea_plan_reject_and_its_errors(sea: Sea) -> None:
    db(sea).parent.mkdir(parents=True, exist_ok=True)
    ws = ("--workspace", str(workspace(sea)))
    none = sea("plan", "show")
    assert none.code == 2 and "has no current plan" in none.err
    plan_id = planned(sea)
    rejected = sea("plan", "reject", plan_id, "--reason", "not like this", *ws)
    assert rejected.code == 0 and "it is proposed" in rejected.out
    again = sea("plan", "approve", plan_id, *ws)
    assert again.code == 1 and "cannot approve plan" in again.err and "proposed" in again.err
    missing = sea("plan", "show", "nope")
    assert missing.code == 2 and "has no plan 'nope'" in missing.err
    shown = sea("plan", "show", plan_id, "--json")
    history = orjson.loads(shown.out)["state"]["history"]
    assert history[-1]["kind"] == "sent_back" and history[-1]["reason"] == "not like this"


def test_a_recorded_plan_pulse_keeps_its_plan_events(sea: Sea) -> None:
    trace = sea.root / "pulse.json"
    code, result, err = run(sea, "--approve", "all", "--record", str(trace))
    assert code == 0, err
    recorded = orjson.loads(trace.read_bytes())
    assert [e["event"] for e in recorded["plan_events"]] == [
        "plan_proposed", "specs_set", "approval_requested", "approved", "executed",
        "completed"]
    assert recorded["status"] == "ok"
