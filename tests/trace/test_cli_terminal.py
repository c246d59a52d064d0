"""``sea run`` on a real terminal (tmux, 80 and 120 columns), read from the screen as a
person sees it: the approval prompt shows its choices and is asked with the live status line
stopped."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import orjson
import pytest

from tests.trace._terminal import Terminal
from tests.trace.test_cli_plans import SCRIPT as PLAN_SCRIPT
from tests.trace.test_cli_plans import TASK
from tests.trace.test_cli_resume import ASKING

ROOT = Path(__file__).resolve().parents[2]


def terminal(tmp_path: Path, width: int, *argv: str) -> Terminal:
    env = {"SEA_HOME": str(tmp_path / "home"), "SEA_DB": str(tmp_path / "memory.sqlite"),
           "TERM": "xterm-256color", "COLUMNS": str(width)}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return Terminal([sys.executable, "-m", "sea", *argv],
                    width=width, cwd=ROOT, env=env)




def script(tmp_path: Path, data: object) -> str:
    path = tmp_path / "script.json"
    path.write_bytes(orjson.dumps(data))
    return f"scripted:{path}"


@pytest.mark.parametrize("width", [80, 120])
def test_the_approval_prompt_shows_its_choices_and_the_spinner_stops(
        tmp_path: Path, width: int) -> None:
    books = tmp_path / "books"
    books.mkdir()
    (books / "ask_tool.json").write_bytes(orjson.dumps(ASKING))
    term = terminal(tmp_path, width, "run", "ask_tool", "--input", "look", "--playbooks",
                    str(books), "--model", script(tmp_path, {"responses": {}}),
                    "--ask-before", "memory_recent")
    try:
        screen = term.wait_for("leave it waiting:")
        prompt = [line.strip() for line in screen.splitlines() if "leave it waiting" in line]
        assert prompt == ["approve? [a]pprove, [d]eny, or Enter to leave it waiting:"], screen
        # the live status line is gone: no spinner or running node drawn while it asks
        assert screen.split("leave it waiting:")[1].strip() == "", screen
        assert "(tool)  " not in screen, screen  # no running node with its seconds
        term.type("a")
        screen = term.wait_for("[exit ")
        assert "I looked." in screen and "[exit 0]" in screen, screen
    finally:
        term.close()


@pytest.mark.parametrize("width", [80, 120])
def test_a_plan_s_approval_prompt_shows_its_choices(tmp_path: Path, width: int) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    term = terminal(tmp_path, width, "run", "--input", TASK, "--model",
                    script(tmp_path, PLAN_SCRIPT), "--workspace", str(workspace))
    try:
        screen = term.wait_for("leave it waiting:")
        prompt = [line.strip() for line in screen.splitlines() if "leave it waiting" in line]
        assert prompt == ["approve? [a]ll, [l]ow risk only, spec ids (1,3), [d]eny, or Enter "
                          "to leave it waiting:"], screen
        term.type("d")
        screen = term.wait_for("[exit ")
        assert "[exit 0]" in screen, screen
    finally:
        term.close()


@pytest.mark.parametrize("width", [80, 120])
def test_the_call_table_and_sea_stats_fit_the_terminal(tmp_path: Path, width: int) -> None:
    reply = {"responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "nothing said yet"}],
        "sub_speak.compose": ["Hello! I'm Aoi."]}}
    db = str(tmp_path / "memory.sqlite")
    # a memory question leaves the router two candidates, so the table has its model call too
    term = terminal(tmp_path, width, "run", "--input", "Do you remember my cat?", "--db", db,
                    "--model",
                    script(tmp_path, reply))
    try:
        screen = term.wait_for("[exit ")
    finally:
        term.close()
    assert "[exit 0]" in screen, screen
    assert "…" not in screen, screen  # no cell cut
    assert screen.count("0.000000") >= 3, screen  # each call's cost and the total, whole
    assert "sub_speak.compose" in screen and "sub_router_user.decide" in screen, screen
    term = terminal(tmp_path, width, "stats", "--db", db)
    try:
        screen = term.wait_for("[exit ")
    finally:
        term.close()
    assert "[exit 0]" in screen and "2 model calls" in screen, screen
    assert "…" not in screen, screen
    assert "sub_speak.compose" in screen and "0.000000" in screen, screen
