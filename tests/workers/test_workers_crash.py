"""The issue's acceptance test: 4 worker processes, 200 pulses of 20 personas, one worker
killed with SIGKILL in the middle of a pulse; then every pulse is done exactly once, each
persona's turns are stored in submission order and never interleave, no message is
stored twice, and no checkpoint is left behind."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from saimemory import Persona
from tests.workers.conftest import Spawn, chat_script, needs_postgres

pytestmark = needs_postgres

PERSONAS = 20
PER_PERSONA = 10
WORKERS = 4


def _rows(dsn: str, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    import psycopg

    from saimemory.postgres import split_schema

    server, schema = split_schema(dsn)
    with psycopg.connect(server, autocommit=True, options=f"-c search_path={schema}") as conn:
        return list(conn.execute(sql, params or []).fetchall())


def _submit_all(dsn: str) -> list[tuple[str, str]]:
    """(persona, pulse id) of every submission, in submission order."""
    from sea.queue import PulseQueue

    async def go() -> list[tuple[str, str]]:
        order = []
        async with PulseQueue(dsn) as queue:
            for turn in range(PER_PERSONA):
                for n in range(PERSONAS):
                    persona = Persona(f"p{n:02d}", f"P{n}", "You are brief.")
                    pulse_id = await queue.submit(persona, "meta_user", f"turn {turn} of p{n:02d}")
                    order.append((persona.id, pulse_id))
        return order

    return asyncio.run(go())


QUIET_S = 120.0
"""The longest the test waits while no pulse ends: a slow machine is waited for as long
as pulses keep ending; a stall fails the test, saying what is stuck."""


def _stuck(dsn: str, workers: list[subprocess.Popen[str]]) -> str:
    """What the queue looks like: the pulses not done, their jobs, the workers' heartbeats,
    the advisory locks held or awaited in the database, the worker processes."""
    parts = [
        ("pulses not done (id, persona, status, attempts, worker, error)",
         "SELECT id, persona, status, attempts, worker, error->>'code' FROM sea_pulses "
         "WHERE status <> 'done' ORDER BY seq LIMIT 12"),
        ("jobs not succeeded (id, status, lock, attempts, worker, scheduled)",
         "SELECT id, status, lock, attempts, worker_id, scheduled_at FROM procrastinate_jobs "
         "WHERE status <> 'succeeded' ORDER BY id LIMIT 12"),
        ("workers (id, seconds since heartbeat)",
         "SELECT id, extract(epoch FROM now() - last_heartbeat) FROM procrastinate_workers"),
        ("advisory locks (pid, keys, granted, session state, query)",
         "SELECT l.pid, l.classid, l.objid, l.objsubid, l.granted, a.state, left(a.query, 60) "
         "FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
         "WHERE l.locktype = 'advisory' AND l.database = "
         "(SELECT oid FROM pg_database WHERE datname = current_database())"),
        ("sessions waiting for a lock, or in a transaction for over 5 s (pid, state, "
         "seconds, query)",
         "SELECT pid, state, extract(epoch FROM now() - xact_start), left(query, 60) "
         "FROM pg_stat_activity WHERE datname = current_database() "
         "AND (wait_event_type = 'Lock' OR now() - xact_start > interval '5 seconds')"),
    ]
    lines = []
    for title, sql in parts:
        lines.append(f"{title}:")
        lines += [f"  {row}" for row in _rows(dsn, sql)]
    lines.append("worker processes: " + ", ".join(
        f"{p.pid} {'running' if p.poll() is None else f'exited {p.returncode}'}"
        for p in workers))
    return "\n".join(lines)


def _done(dsn: str) -> int:
    return int(_rows(dsn, "SELECT count(*) FROM sea_pulses WHERE status = 'done'")[0][0])


def _wait_while_pulses_end(dsn: str, workers: list[subprocess.Popen[str]], what: str,
                           found: Callable[[], Any]) -> Any:
    """Poll ``found`` until it returns something; fail once no pulse has ended for
    ``QUIET_S`` seconds (a stall), describing what is stuck."""
    last, since = -1, time.monotonic()
    while not (result := found()):
        done = _done(dsn)
        if done != last:
            last, since = done, time.monotonic()
        elif time.monotonic() - since > QUIET_S:
            raise AssertionError(f"waiting for {what}: no pulse ended for {QUIET_S:g}s "
                                 f"({done} done)\n{_stuck(dsn, workers)}")
        time.sleep(0.02)
    return result


def test_four_workers_survive_a_sigkill(queue_dsn: str, spawn: Spawn, tmp_path: Path) -> None:
    order = _submit_all(queue_dsn)
    script = chat_script(tmp_path / "script.json", PERSONAS * PER_PERSONA + 20, delay=0.03)
    workers = [
        spawn("worker", "--db", queue_dsn, "--model", f"scripted:{script}", "--concurrency", "2",
              "--stall-timeout", "3", "--heartbeat", "0.5", "--tick", "0.5", "--attempts", "3")
        for _ in range(WORKERS)
    ]
    by_pid = {process.pid: process for process in workers}

    # a pulse that started a moment ago is mid-way: kill its worker there and then
    def fresh_running() -> list[tuple[Any, ...]]:
        return _rows(queue_dsn, "SELECT id, worker FROM sea_pulses WHERE status = 'running' "
                                "AND started_at > now() - interval '40 milliseconds' LIMIT 1")

    _wait_while_pulses_end(queue_dsn, workers, "30 pulses done",
                           lambda: _done(queue_dsn) >= 30)
    victim_pulse, victim = _wait_while_pulses_end(
        queue_dsn, workers, "a pulse that has just started", fresh_running)[0]
    pid = int(victim.rsplit(":", 1)[1])
    os.kill(pid, signal.SIGKILL)
    by_pid[pid].wait(timeout=10)
    [(status, worker)] = _rows(queue_dsn, "SELECT status, worker FROM sea_pulses WHERE id = %s",
                               [victim_pulse])
    assert (status, worker) == ("running", victim), "the worker was not killed mid-pulse"

    total = PERSONAS * PER_PERSONA
    _wait_while_pulses_end(queue_dsn, workers, "every pulse done",
                           lambda: _done(queue_dsn) == total)
    for process in workers:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in workers:
        process.wait(timeout=30)
    survivors = [p for p in workers if p.pid != pid]
    assert all(p.returncode == 0 for p in survivors)

    # every pulse done exactly once; the killed one was taken over by another worker
    rows = _rows(queue_dsn, "SELECT id, status, attempts, worker FROM sea_pulses")
    assert len(rows) == total and {r[1] for r in rows} == {"done"}
    attempts = {r[0]: r[2] for r in rows}
    assert attempts[victim_pulse] == 2
    assert next(r[3] for r in rows if r[0] == victim_pulse) != victim
    assert _rows(queue_dsn, "SELECT id, status FROM procrastinate_jobs "
                            "WHERE status <> 'succeeded'") == []

    # each persona's turns: its pulses' input and reply, in submission order, never interleaved
    messages = _rows(queue_dsn, "SELECT persona, pulse_id, role, content, uid FROM messages "
                                "ORDER BY id")
    stored = Counter(m[1] for m in messages)
    wrong = {pulse_id: ([(m[2], m[4]) for m in messages if m[1] == pulse_id],
                        attempts[pulse_id]) for _, pulse_id in order if stored[pulse_id] != 2}
    assert len(messages) == 2 * total and not wrong, (
        f"messages lost or stored twice ((role, uid) of each, attempts), the killed worker's "
        f"pulse being {victim_pulse}: {wrong}")
    assert len({(m[0], m[4]) for m in messages}) == len(messages)
    for n in range(PERSONAS):
        persona = f"p{n:02d}"
        expected = [pid_ for who, pid_ in order if who == persona]
        turns = [(m[1], m[2], m[3]) for m in messages if m[0] == persona]
        wanted = []
        for turn, pulse_id in enumerate(expected):
            wanted += [(pulse_id, "user", f"turn {turn} of {persona}"),
                       (pulse_id, "assistant", "Glad to hear from you.")]
        assert turns == wanted, persona

    # no checkpoint left behind
    for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs"):
        assert _rows(queue_dsn, f"SELECT count(*) FROM {table}") == [(0,)], table
