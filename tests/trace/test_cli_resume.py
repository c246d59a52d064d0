"""``sea run --events jsonl``, ``--ask-before`` and ``sea resume``: a waiting pulse is
continued by a later command (another runtime) from the checkpoints beside the store."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import orjson
import pytest

from tests.trace.conftest import Sea

ASKING = {
    "name": "ask_tool",
    "description": "Looks at recent memory, which needs a person's approval.",
    "start_node": "look",
    "nodes": [
        {"id": "look", "type": "tool", "action": "memory_recent", "args": {"limit": 2},
         "output_key": "recent", "next": "done", "error_next": "denied"},
        {"id": "done", "type": "speak", "action": "I looked."},
        {"id": "denied", "type": "speak", "action": "Not allowed: {error.code}"},
    ],
}


def playbooks(sea: Sea) -> Path:
    directory = sea.root / "books"
    directory.mkdir(exist_ok=True)
    (directory / "ask_tool.json").write_bytes(orjson.dumps(ASKING))
    return directory


def lines(out: str) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in out.splitlines()]


def test_events_jsonl_prints_every_event_as_one_json_line(sea: Sea) -> None:
    done = sea("run", "--input", "Hello", "--model", sea.script(), "--events", "jsonl")
    assert done.code == 0, done.err
    events = lines(done.out)
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "pulse_start" and kinds[-1] == "pulse_end"
    assert {"node_start", "node_end", "llm_call", "memory_write", "spoken"} <= set(kinds)
    assert len({e["pulse_id"] for e in events}) == 1
    assert events[-1]["status"] == "ok"
    spoken = [e["text"] for e in events if e["kind"] == "spoken"]
    assert spoken == ["Hello! I'm Aoi."]


def test_events_and_json_cannot_be_combined(sea: Sea) -> None:
    with pytest.raises(SystemExit) as info:
        sea("run", "--input", "Hi", "--json", "--events", "jsonl")
    assert info.value.code == 2
    assert "not allowed with" in sea.capsys.readouterr().err


def run_waiting(sea: Sea, directory: Path, *extra: str) -> str:
    done = sea("run", "ask_tool", "--input", "look", "--model", sea.script(), "--playbooks",
               str(directory), "--ask-before", "memory_recent", "--json", *extra)
    assert done.code == 0, done.err
    result = orjson.loads(done.out)
    assert result["status"] == "waiting"
    assert result["spoken"] == []
    assert "sea resume " + result["pulse_id"] in done.err
    assert "--ask-before memory_recent" in done.err
    return str(result["pulse_id"])


def test_a_waiting_pulse_is_approved_by_a_later_command(sea: Sea) -> None:
    directory = playbooks(sea)
    pulse = run_waiting(sea, directory)
    done = sea("resume", pulse, "--approve", "--playbooks", str(directory), "--model",
               sea.script(), "--events", "jsonl")
    assert done.code == 0, done.err
    events = lines(done.out)
    assert [e["text"] for e in events if e["kind"] == "spoken"] == ["I looked."]
    assert [e["tool"] for e in events if e["kind"] == "tool_call"] == ["memory_recent"]
    again = sea("resume", pulse, "--approve", "--playbooks", str(directory), "--model",
                sea.script())
    assert again.code == 2  # it ended: nothing waits any more
    assert "is not waiting" in again.err


def test_a_denial_is_routed_and_the_tool_never_runs(sea: Sea) -> None:
    directory = playbooks(sea)
    pulse = run_waiting(sea, directory)
    # the resuming command does not repeat --ask-before: the pulse keeps its own policy
    done = sea("resume", pulse, "--deny", "--playbooks", str(directory), "--json",
               "--model", sea.script())
    assert done.code == 0, done.err
    result = orjson.loads(done.out)
    assert result["spoken"] == ["Not allowed: SEA575"]
    assert [e["code"] for e in result["handled_errors"]] == ["SEA575"]


def test_resume_of_an_unknown_pulse_exits_2(sea: Sea) -> None:
    done = sea("resume", "no-such-pulse", "--approve", "--model", sea.script())
    assert done.code == 2
    assert "is not waiting" in done.err


def test_resume_needs_an_answer(sea: Sea) -> None:
    with pytest.raises(SystemExit) as info:
        sea("resume", "abc")
    assert info.value.code == 2
    assert "--approve" in sea.capsys.readouterr().err


DSN = os.environ.get("SEA_TEST_POSTGRES_DSN")


@pytest.mark.postgres
@pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_on_a_postgresql_store_another_process_resumes_from_its_checkpoints(sea: Sea) -> None:
    import psycopg

    assert DSN is not None
    schema = f"cli_{uuid.uuid4().hex[:10]}"
    db = f"{DSN}?schema={schema}"
    directory = playbooks(sea)
    try:
        pulse = run_waiting(sea, directory, "--db", db)
        assert not list(sea.root.glob("home/*checkpoints*"))  # nothing kept on local disk
        env = {**os.environ, "SEA_HOME": str(sea.root / "elsewhere")}
        done = subprocess.run(
            [sys.executable, "-m", "sea", "resume", pulse, "--approve", "--db", db,
             "--playbooks", str(directory), "--model", sea.script(), "--json"],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )
        assert done.returncode == 0, done.stderr
        assert orjson.loads(done.stdout)["spoken"] == ["I looked."]
        with psycopg.connect(DSN, autocommit=True) as conn:
            tables = {row[0] for row in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                [schema])}
        assert {"checkpoints", "checkpoint_writes", "messages"} <= tables
    finally:
        with psycopg.connect(DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_sigterm_cancels_the_pulse_like_ctrl_c_and_leaves_no_checkpoints(sea: Sea) -> None:
    import signal
    import sqlite3
    import time

    script = {"responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "hi"}],
        "sub_speak.compose": [" ".join(["word"] * 200)],
    }, "chunk_delay_s": 0.05}
    db = sea.root / "memory.sqlite"
    env = {**os.environ, "SEA_HOME": str(sea.root / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sea", "run", "--input", "Hello", "--db", str(db),
         "--model", sea.script(script), "--events", "jsonl"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # wait until the reply streams
            if '"kind":"token"' in line:
                break
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 130, proc.stderr.read() if proc.stderr else ""
    time.sleep(0.1)
    with sqlite3.connect(db) as conn:
        replies = conn.execute("SELECT count(*) FROM messages WHERE role = 'assistant'").fetchone()
    assert replies == (0,)  # the partial reply was not stored as complete
    with sqlite3.connect(sea.root / "memory.checkpoints.sqlite") as conn:
        left = conn.execute("SELECT count(*) FROM checkpoints").fetchone()
    assert left == (0,)


def test_a_killed_pulse_leaves_no_checkpoints_and_a_waiting_one_is_kept(sea: Sea) -> None:
    import signal
    import sqlite3

    directory = playbooks(sea)
    db = sea.root / "memory.sqlite"
    waiting = run_waiting(sea, directory, "--db", str(db))
    script = {"responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "hi"}],
        "sub_speak.compose": [" ".join(["word"] * 400)],
    }, "chunk_delay_s": 0.05}
    env = {**os.environ, "SEA_HOME": str(sea.root / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sea", "run", "--input", "Hello", "--db", str(db),
         "--model", sea.script(script), "--events", "jsonl"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if '"kind":"token"' in line:
                break
        proc.send_signal(signal.SIGKILL)  # no cleanup can run
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    checkpoints = sea.root / "memory.checkpoints.sqlite"

    def threads() -> set[str]:
        with sqlite3.connect(checkpoints) as conn:
            return {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}

    # a pulse no other process takes over writes its checkpoint only when it waits or ends
    assert threads() == {waiting}
    done = sea("run", "--input", "Hi", "--model", sea.script(), "--db", str(db), "--json")
    assert done.code == 0, done.err
    assert threads() == {waiting}  # the ended pulse's removed; the waiting pulse kept
    resumed = sea("resume", waiting, "--approve", "--db", str(db), "--playbooks",
                  str(directory), "--model", sea.script(), "--json")
    assert resumed.code == 0, resumed.err
