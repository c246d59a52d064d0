"""A worker keeps account of every pulse: a fault below the runtime is an attempt that
failed (retried, then ``failed`` with its error), a job that ended without recording its
pulse's end fails the pulse, and a pulse whose end is recorded is never sent back to run
again (PostgreSQL, the workers extra)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from saimemory import Persona
from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update
from sea.lang.node import FallibleNode
from sea.nodes import builtin_registry
from sea.queue import PulseQueue
from sea.queue.pulses import PULSE_TASK
from tests.workers.conftest import DSN, needs_postgres
from tests.workers.test_queue import AOI, FAST, KEN, _read, _until, _with_worker

pytestmark = needs_postgres


class Panic(BaseException):
    """Raised as a native extension's panic is: not an ``Exception``."""


class PanicNode(FallibleNode):
    """Panic the first ``times`` runs."""

    type: Literal["panic"] = Field(description="Node type: panic the first runs.")
    times: int = Field(description="How many runs panic.")


class PanicKind(NodeKind[PanicNode]):
    """Runs ``panic`` nodes, counting runs per node id."""

    model = PanicNode

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()

    async def run(self, node: PanicNode, state: PlaybookState, frame: Frame) -> Update:
        self.runs[node.id] += 1
        if self.runs[node.id] <= node.times:
            raise Panic(f"native fault in run {self.runs[node.id]}")
        return {}


def _panic_playbooks(directory: Path) -> str:
    directory.mkdir()
    for name, times in (("panics_once", 1), ("panics_always", 99)):
        (directory / f"{name}.json").write_text(json.dumps({
            "name": name, "description": "Panics, maybe more than once.", "start_node": name,
            "nodes": [{"id": name, "type": "panic", "times": times}],
        }))
    return str(directory)


def test_a_fault_below_the_runtime_is_retried_then_fails_with_its_error(
        queue_dsn: str, tmp_path: Path) -> None:
    async def work(queue: PulseQueue) -> Any:
        once = await queue.submit(AOI, "panics_once")
        always = await queue.submit(KEN, "panics_always")
        return await _until(queue, once, "done", "failed"), await _until(queue, always,
                                                                          "done", "failed")

    once, always = asyncio.run(_with_worker(
        queue_dsn, tmp_path, {}, work, FAST, library=[_panic_playbooks(tmp_path / "pb")],
        registry=builtin_registry().with_kinds(PanicKind())))
    assert (once.status, once.attempts, once.error) == ("done", 2, None)
    assert (always.status, always.attempts) == ("failed", 2)
    assert always.error["code"] == "SEA500"
    assert always.error["message"] == "Panic: native fault in run 2"


async def _stale_worker(conn: Any) -> int:
    """A procrastinate worker row whose last heartbeat is an hour old (a dead worker)."""
    row = await (await conn.execute(
        "INSERT INTO procrastinate_workers (last_heartbeat) VALUES (now() - interval '1 hour') "
        "RETURNING id")).fetchone()
    return int(row[0])


async def _job_left(queue: PulseQueue, pulse_id: str) -> bool:
    """A job of the pulse is still to run or running."""
    async with queue.connection() as conn:
        row = await (await conn.execute(
            "SELECT count(*) FROM procrastinate_jobs WHERE task_name = %s "
            "AND args->>'pulse_id' = %s AND status IN ('todo', 'doing')",
            [PULSE_TASK, pulse_id])).fetchone()
    return bool(row and row[0])


def test_a_lost_job_fails_its_pulse_and_an_ended_pulse_is_not_run_again(
        queue_dsn: str, tmp_path: Path) -> None:
    lost, ended = Persona("lost", "Lost", "."), Persona("ended", "Ended", ".")

    async def setup(queue: PulseQueue) -> tuple[str, str]:
        lost_id = await queue.submit(lost, "meta_user", "hi")
        ended_id = await queue.submit(ended, "meta_user", "hi")
        async with queue.connection() as conn:
            dead = await _stale_worker(conn)
            # the job of `lost` failed past its last attempt without recording its end
            await conn.execute("UPDATE sea_pulses SET status = 'running', attempts = 3 "
                               "WHERE id = %s", [lost_id])
            await conn.execute("UPDATE procrastinate_jobs SET status = 'failed' "
                               "WHERE args->>'pulse_id' = %s", [lost_id])
            # `ended`'s worker recorded its end, then died before its job finished
            await conn.execute("UPDATE sea_pulses SET status = 'done', attempts = 1, "
                               "result = '{\"spoken\": [\"Bye.\"]}', ended_at = now() "
                               "WHERE id = %s", [ended_id])
            await conn.execute("UPDATE procrastinate_jobs SET status = 'doing', worker_id = %s "
                               "WHERE args->>'pulse_id' = %s", [dead, ended_id])
        return lost_id, ended_id

    lost_id, ended_id = asyncio.run(_read(queue_dsn, setup))

    async def work(queue: PulseQueue) -> Any:
        failed = await _until(queue, lost_id, "failed")
        while await _job_left(queue, ended_id):
            await asyncio.sleep(0.05)
        return failed, await queue.pulse(ended_id)

    failed, done = asyncio.run(_with_worker(queue_dsn, tmp_path, {}, work, FAST))
    assert failed.error["code"] == "SEA596"
    assert "ended during attempt 3 of 2 without recording" in failed.error["message"]
    assert (done.status, done.attempts, done.result, done.error) == (
        "done", 1, {"spoken": ["Bye."]}, None)



def test_a_persona_lock_session_has_the_server_notice_a_vanished_holder() -> None:
    import psycopg

    from saimemory.locks import LOCK_SESSION_KEEPALIVE, PgLockConnections

    assert DSN is not None
    connections = PgLockConnections(lambda: psycopg.connect(DSN, autocommit=True))
    conn = connections.take()
    try:
        for name, value in LOCK_SESSION_KEEPALIVE.items():
            [(shown,)] = conn.execute(f"SELECT current_setting('{name}')").fetchall()
            # over TCP the server keeps the setting; over a Unix socket it reads 0
            assert shown in (str(value), "0"), name
    finally:
        connections.give_back(conn)
        connections.close()
