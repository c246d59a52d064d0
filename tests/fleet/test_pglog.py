"""The PostgreSQL event log: numbered entries, live followers in other processes' shoes
(another log object on the same schema), several writers one after the other, retention."""

from __future__ import annotations

import asyncio
import time

from sea.serve.db import ServerDB
from sea.serve.pglog import DDL, PgEventLog
from tests.fleet.conftest import needs_postgres

pytestmark = needs_postgres


def _tables(dsn: str) -> None:
    db = ServerDB(dsn)
    try:
        db.create(DDL)
    finally:
        db.close()


def test_a_reader_on_another_log_follows_live_and_resumes(store_dsn: str) -> None:
    _tables(store_dsn)

    async def go() -> None:
        writer, reader = PgEventLog(store_dsn), PgEventLog(store_dsn)
        try:
            assert not (await reader.read("r1", 0, 0.01)).known
            await writer.open("r1")
            await writer.append("r1", "metadata", {"n": 0})
            await writer.flush()
            first = await reader.read("r1", 0, 1.0)
            assert [(e.seq, e.kind) for e in first.entries] == [(1, "metadata")]
            assert not first.closed

            async def later() -> None:
                await asyncio.sleep(0.2)
                for n in range(1, 4):
                    await writer.append("r1", "token", {"n": n})

            started = time.monotonic()
            task = asyncio.create_task(later())
            live = await reader.read("r1", 1, 10.0)  # woken by the notification
            assert time.monotonic() - started < 5
            await task
            await writer.close("r1")
            await writer.flush()
            seen = list(live.entries)
            while True:
                batch = await reader.read("r1", seen[-1].seq, 1.0)
                seen += batch.entries
                if batch.closed:
                    break
            assert [(e.seq, e.data["n"]) for e in seen] == [(2, 1), (3, 2), (4, 3)]
            again = await reader.read("r1", 2, 0.01)  # Last-Event-ID 2
            assert [e.seq for e in again.entries] == [3, 4] and again.closed
        finally:
            await writer.aclose()
            await reader.aclose()

    asyncio.run(go())


def test_a_second_writer_numbers_after_the_first(store_dsn: str) -> None:
    _tables(store_dsn)

    async def go() -> None:
        first, second = PgEventLog(store_dsn), PgEventLog(store_dsn)
        try:
            await first.open("r2")
            for n in range(3):
                await first.append("r2", "e", n)
            await first.flush()
            await first.aclose()  # the first writer is gone
            for n in range(3, 5):
                await second.append("r2", "e", n)
            await second.close("r2")
            await second.flush()
            batch = await second.read("r2", 0, 0.01)
            assert [(e.seq, e.data) for e in batch.entries] == [(i + 1, i) for i in range(5)]
            assert batch.closed
            await second.wait_closed("r2")
        finally:
            await second.aclose()

    asyncio.run(go())


def test_the_sweep_removes_logs_closed_long_ago(store_dsn: str) -> None:
    _tables(store_dsn)

    async def go() -> None:
        events = PgEventLog(store_dsn, ttl_s=0.0, sweep_s=0)
        try:
            for run in ("old", "open"):
                await events.open(run)
                await events.append(run, "e", 1)
            await events.close("old")
            await events.flush()
            await asyncio.sleep(0.05)
            assert await events.sweep() == 1
            assert not (await events.read("old", 0, 0.01)).known
            assert [e.seq for e in (await events.read("open", 0, 0.01)).entries] == [1]
        finally:
            await events.aclose()

    asyncio.run(go())
