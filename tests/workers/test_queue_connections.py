"""The queue's connections and transactions: a pooled connection is checked with a round
trip only when it may be dead (PostgreSQL, the workers extra)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import psycopg
import pytest

from saimemory import Persona
from sea.queue import PulseQueue
from sea.queue.db import DoubtfulCheck, QueueDsn
from tests.workers.conftest import DSN, needs_postgres

pytestmark = needs_postgres
AOI = Persona("aoi", "Aoi", "You are Aoi.")


def _terminate(server: str, backend: int) -> None:
    """End a backend from outside, and wait until it is gone."""
    with psycopg.connect(server, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [backend])
        while other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s",
                            [backend]).fetchone():
            time.sleep(0.01)


async def _backend(conn: Any) -> int:
    row = await (await conn.execute("SELECT pg_backend_pid()")).fetchone()
    return int(row[0])


def test_a_connection_the_server_closed_is_found_dead_though_just_used() -> None:
    assert DSN is not None

    async def scenario() -> str:
        check_if_doubtful = DoubtfulCheck()
        async with await psycopg.AsyncConnection.connect(DSN, autocommit=True) as conn:
            await check_if_doubtful(conn)  # never handed out: checked
            backend = await _backend(conn)
            await check_if_doubtful(conn)  # in use moments ago, alive: no round trip
            _terminate(DSN, backend)
            with pytest.raises(psycopg.OperationalError) as info:
                await check_if_doubtful(conn)  # moments ago too, but its socket says
            return str(info.value)

    assert asyncio.run(scenario())


def test_the_queue_replaces_a_pooled_connection_the_server_closed(queue_dsn: str) -> None:
    server = QueueDsn(queue_dsn).server

    async def scenario() -> tuple[int, int, str]:
        async with PulseQueue(queue_dsn) as queue:
            pulse_id = await queue.submit(AOI, "meta_user", "hi")
            assert queue.app.connector.pool.get_stats()["pool_size"] == 1
            async with queue.connection() as conn:
                first = await _backend(conn)
            _terminate(server, first)
            record = await queue.pulse(pulse_id)  # not an error: another connection
            async with queue.connection() as conn:
                second = await _backend(conn)
        return first, second, record.status

    first, second, status = asyncio.run(scenario())
    assert status == "queued" and second != first


def _record(pulse_id: str, priority: Any) -> Any:
    from datetime import UTC, datetime

    from sea.queue.records import PulseRecord

    return PulseRecord(id=pulse_id, persona=Persona(pulse_id, "P", ""), playbook="meta_user",
                       input="", args={}, status="running", attempts=1,
                       submitted_at=datetime.now(UTC), started_at=None, ended_at=None,
                       result=None, error=None, priority=priority)


def test_only_pulses_that_can_be_outranked_make_the_preemption_watch_read(
        queue_dsn: str, tmp_path: Any) -> None:
    from saimemory.sqlite import SQLiteStore
    from sea.chat.scripted import ScriptedChatModel
    from sea.host.config import RuntimeConfig
    from sea.host.runtime import Runtime
    from sea.lang.library import PlaybookLibrary
    from sea.llm.models import ModelSet
    from sea.queue.preempt import Preemptions

    store = SQLiteStore(tmp_path / "store.db")
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping(
        {"responses": {}})), library=PlaybookLibrary.bundled([])))

    async def scenario() -> str:
        queue = PulseQueue(queue_dsn)
        await queue.open()
        await queue.close()  # any read now fails
        watch = Preemptions(queue, runtime, print)
        watch.started(_record("mine", "user"))
        await watch.look()  # nothing outranks a user's pulse: nothing is read
        watch.started(_record("theirs", "autonomous"))
        with pytest.raises(Exception) as info:
            await watch.look()  # a user's pulse may: it reads what waits
        return type(info.value).__name__

    try:
        assert asyncio.run(scenario())
    finally:
        runtime.close()
        store.close()


def test_a_job_that_ends_wakes_the_workers_when_a_job_of_its_persona_waits(
        queue_dsn: str) -> None:
    from procrastinate.jobs import Status

    from sea.queue.db import WAKE_CHANNEL

    dsn = QueueDsn(queue_dsn)
    marker = "marker"

    async def wakes(listener: Any, sender: Any) -> list[str]:
        """The notifications of the wake channel up to a marker sent now (in commit order,
        so whatever an earlier commit sent comes first)."""
        await sender.execute("SELECT pg_notify(%s, %s)", [WAKE_CHANNEL, marker])
        got = []
        async for note in listener.notifies():
            if note.payload == marker:
                return got
            got.append(note.payload)
        return got

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        async with PulseQueue(queue_dsn) as queue, \
                await psycopg.AsyncConnection.connect(
                    dsn.server, options=dsn.options, autocommit=True) as listener, \
                await psycopg.AsyncConnection.connect(
                    dsn.server, options=dsn.options, autocommit=True) as sender:
            await listener.execute(f"LISTEN {WAKE_CHANNEL}")
            await queue.submit(AOI, "meta_user", "first")
            await queue.submit(AOI, "meta_user", "second")
            await wakes(listener, sender)  # those of the inserted jobs
            manager = queue.app.job_manager
            worker_id = await manager.register_worker()
            first = await manager.fetch_job(queues=None, worker_id=worker_id)
            assert first is not None and await manager.fetch_job(
                queues=None, worker_id=worker_id) is None  # its lock holds the second back
            nothing_yet = await wakes(listener, sender)
            await manager.finish_job(first, status=Status.SUCCEEDED, delete_job=True)
            woken = await wakes(listener, sender)  # the second waits: the workers wake
            second = await manager.fetch_job(queues=None, worker_id=worker_id)
            assert second is not None
            await manager.finish_job(second, status=Status.SUCCEEDED, delete_job=True)
            none_waits = await wakes(listener, sender)
        return nothing_yet, woken, none_waits

    nothing_yet, woken, none_waits = asyncio.run(scenario())
    assert nothing_yet == [] and none_waits == []
    assert len(woken) == 1 and '"job_inserted"' in woken[0]


def test_a_connection_block_is_one_transaction_and_a_single_one_commits_each_statement(
        queue_dsn: str) -> None:
    class Stop(Exception):
        pass

    async def scenario() -> tuple[str, str]:
        async with PulseQueue(queue_dsn) as queue:
            kept = await queue.submit(AOI, "meta_user", "kept")
            undone = await queue.submit(AOI, "meta_user", "undone")
            with pytest.raises(Stop):
                async with queue.connection() as conn:
                    await conn.execute("UPDATE sea_pulses SET status = 'failed' WHERE id = %s",
                                       [undone])
                    raise Stop  # the whole block is rolled back
            with pytest.raises(Stop):
                async with queue.single() as conn:
                    await conn.execute("UPDATE sea_pulses SET status = 'failed' WHERE id = %s",
                                       [kept])
                    raise Stop  # the statement was committed already
            return (await queue.pulse(kept)).status, (await queue.pulse(undone)).status

    assert asyncio.run(scenario()) == ("failed", "queued")


def test_a_submission_writes_the_pulse_and_its_job_together_or_neither(queue_dsn: str) -> None:
    async def scenario() -> tuple[list[Any], Any]:
        async with PulseQueue(queue_dsn) as queue:
            await queue.submit(AOI, "meta_user", "hi", pulse_id="p1", priority="autonomous")
            with pytest.raises(psycopg.errors.UniqueViolation):
                await queue.submit(AOI, "meta_user", "again", pulse_id="p1")
            async with queue.single() as conn:
                jobs = await (await conn.execute(
                    "SELECT id, task_name, lock, priority, args->>'pulse_id', status "
                    "FROM procrastinate_jobs ORDER BY id")).fetchall()
                row = await (await conn.execute(
                    "SELECT job_id, status, input FROM sea_pulses WHERE id = 'p1'")).fetchone()
        return jobs, row

    jobs, row = asyncio.run(scenario())
    assert len(jobs) == 1  # the second submission left no job behind
    job_id, task, lock, priority, pulse_id, status = jobs[0]
    assert (task, lock, priority, pulse_id, status) == (
        "sea.pulse", "sea-persona:aoi", 2, "p1", "todo")
    assert row == (job_id, "queued", "hi")
