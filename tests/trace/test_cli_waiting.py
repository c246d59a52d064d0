"""A waiting pulse cannot be lost: ``sea run`` prints two whole ``sea resume`` commands that
a shell runs as pasted, ``sea pulses`` lists the waiting pulses of a SQLite store, and
``sea resume`` with an id no pulse waits with says so and names those that do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.trace.conftest import Sea
from tests.trace.test_cli_resume import playbooks


def hints(err: str) -> list[str]:
    return [line.strip() for line in err.splitlines() if line.strip().startswith("sea resume ")]


def shell(sea: Sea, command: str) -> subprocess.CompletedProcess[str]:
    """``command`` run by bash as pasted, with ``sea`` on the PATH."""
    bin_dir = sea.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    launcher = bin_dir / "sea"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} -m sea "$@"\n')
    launcher.chmod(0o755)
    env = {**os.environ, "SEA_HOME": str(sea.root / "home"),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parents[2], timeout=120, check=False)


def waiting(sea: Sea, directory: Path, db: str) -> tuple[str, list[str]]:
    """A pulse that waits for approval: its id and the resume commands printed."""
    done = sea("run", "ask_tool", "--input", "look", "--model", sea.script(), "--playbooks",
               str(directory), "--ask-before", "memory_recent", "--db", db, "--json")
    assert done.code == 0, done.err
    result = orjson.loads(done.out)
    assert result["status"] == "waiting"
    return str(result["pulse_id"]), hints(done.err)


def test_the_printed_resume_commands_run_as_pasted(sea: Sea) -> None:
    directory = playbooks(sea)
    db = str(sea.root / "memory.sqlite")
    first, (approve, deny) = waiting(sea, directory, db)
    assert first in approve and "--approve" in approve and "|" not in approve
    assert first in deny and "--deny" in deny and "|" not in deny
    done = shell(sea, approve)
    assert done.returncode == 0, done.stderr
    assert "I looked." in done.stdout
    second, (_, deny) = waiting(sea, directory, db)
    done = shell(sea, deny)
    assert done.returncode == 0, done.stderr
    assert "Not allowed: SEA" in done.stdout
    assert sea("pulses", "--db", db).out == ""  # neither waits any more


def test_sea_pulses_lists_the_waiting_pulses_of_a_sqlite_store(sea: Sea) -> None:
    directory = playbooks(sea)
    db = str(sea.root / "memory.sqlite")
    done = sea("pulses", "--db", db)
    assert done.code == 0 and done.out == ""
    assert "no pulse waits for an answer" in done.err
    first, _ = waiting(sea, directory, db)
    second, _ = waiting(sea, directory, db)
    done = sea("pulses", "--db", db)
    assert done.code == 0, done.err
    rows = done.out.splitlines()
    assert [row.split()[0] for row in rows] == [first, second]  # the longest waiting first
    assert all("waiting" in row and "memory_recent" in row for row in rows)
    listed = [orjson.loads(line) for line in sea("pulses", "--db", db, "--json").out.splitlines()]
    assert [item["id"] for item in listed] == [first, second]
    assert listed[0]["requests"][0]["tool"] == "memory_recent"


def test_resume_with_an_id_no_pulse_waits_with_names_those_that_do(sea: Sea) -> None:
    directory = playbooks(sea)
    db = str(sea.root / "memory.sqlite")
    done = sea("resume", "nope", "--approve", "--db", db, "--model", sea.script())
    assert done.code == 2
    assert "SEA391" in done.err and "'nope' is not waiting" in done.err
    assert "no pulse waits with that id" in done.err
    assert "none does" in done.err
    pulse, _ = waiting(sea, directory, db)
    done = sea("resume", "nope", "--approve", "--db", db, "--model", sea.script())
    assert done.code == 2
    assert "no pulse waits with that id" in done.err and "these do:" in done.err
    assert pulse in done.err
    assert "checkpointer" not in done.err
