"""The runs' event logs in PostgreSQL: every server process follows every run.

Two tables of the store's schema: ``sea_run_logs`` (one row per run's log: when it was
opened, when closed) and ``sea_run_events`` (``run_id, seq, kind, data, at``). Writes are
queued in memory and written by one task per process in small batches, each batch one
transaction that ends with ``pg_notify('sea_run_events', run_id)`` for the runs it
touched; the ``LISTEN`` side (:mod:`sea.serve.pgnotify`) wakes the streams waiting for
them, in whichever process they are. A batch takes the run's advisory lock and numbers
its entries after the highest one stored, so whoever writes a run's log (the server that
started it, then a worker, then the worker that took the pulse over from a dead one) the
numbers follow one another with no gap and no repeat; a stream resumes from the table
with ``Last-Event-ID``.

:meth:`PgEventLog.append` returns 0: an entry's number is given when it is written
(:meth:`PgEventLog.flush` waits for that). :meth:`PgEventLog.sweep` removes the logs
closed longer than the retention ago.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import orjson

from sea.serve.eventlog import Batch, Entry
from sea.serve.pgnotify import PgListener, pg_connect_args

log = logging.getLogger("sea.serve")

CHANNEL = "sea_run_events"
"""The notification channel: the payload is a run id whose log grew or closed."""
DDL = (
    """CREATE TABLE IF NOT EXISTS sea_run_logs (
        run_id TEXT PRIMARY KEY, opened_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        closed_at TIMESTAMPTZ, owner TEXT)""",
    "CREATE INDEX IF NOT EXISTS sea_run_logs_closed ON sea_run_logs (closed_at)",
    """CREATE TABLE IF NOT EXISTS sea_run_events (
        run_id TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,
        at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (run_id, seq))""",
)
"""The tables (created by :meth:`sea.serve.db.ServerDB.create`)."""
PAGE = 500
"""The most entries one read returns."""
_LOCK_SPACE = 0x5EA0E7  # advisory lock (space, hashtext(run_id)): one writer of a log at a time


@dataclass(frozen=True, slots=True)
class _Op:
    what: str  # open, event, close
    run_id: str
    kind: str = ""  # an open's: the owner
    data: bytes = b""


class PgEventLog:
    """Numbered event logs in PostgreSQL tables, followed through ``LISTEN/NOTIFY``.

    Args:
        location: The store's ``postgresql://`` DSN (``?schema=`` allowed); the tables
            must exist (:data:`DDL`).
        listener: The process's listener (its :meth:`~PgListener.start` is called here on
            first use; default: one of its own).
        ttl_s: How long a closed log is kept (:meth:`sweep`).
        sweep_s: Seconds between sweeps by this process (0: none).
    """

    def __init__(self, location: str, *, listener: PgListener | None = None,
                 ttl_s: float = 900.0, sweep_s: float = 60.0) -> None:
        self._dsn, self._kwargs = pg_connect_args(location)
        self.listener = listener or PgListener(location)
        self.listener.subscribe(CHANNEL, self._wake)
        self.ttl_s, self._sweep_s = ttl_s, sweep_s
        self._ops: list[_Op] = []
        self._queued = self._written = 0
        self._more = asyncio.Event()
        self._progress = asyncio.Condition()
        self._waiters: dict[str, asyncio.Event] = {}
        self._writer: Any = None
        self._reader: Any = None
        self._read_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False
        self.owner: str | None = None
        """The server that runs the runs this process opens (:mod:`sea.serve.owners`),
        recorded on their logs; None: they run elsewhere (a worker)."""

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, listen, and start the writer (and sweeper); called on first use."""
        if self._started:
            return
        self._started = True
        await self.listener.start()
        self._tasks.append(asyncio.create_task(self._write_loop(), name="sea-log-writer"))
        if self._sweep_s > 0:
            self._tasks.append(asyncio.create_task(self._sweep_loop(), name="sea-log-sweep"))

    async def aclose(self) -> None:
        """Write what is queued, then stop (and close the connections)."""
        if not self._started:
            return
        try:
            await asyncio.wait_for(self.flush(), 10)
        except TimeoutError:
            log.warning("sea serve: %d event(s) not written at shutdown",
                        self._queued - self._written)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        await self.listener.aclose()
        for conn in (self._writer, self._reader):
            if conn is not None:
                await conn.close()
        self._started = False

    async def connect(self) -> Any:
        """A new connection to the log's database (autocommit; the caller closes it)."""
        import psycopg

        return await psycopg.AsyncConnection.connect(self._dsn, **self._kwargs)

    # -- writing --------------------------------------------------------------------------

    def _queue(self, op: _Op) -> None:
        self._ops.append(op)
        self._queued += 1
        self._more.set()

    async def open(self, run_id: str) -> None:
        """Start the empty log of a new run (queued)."""
        await self.start()
        self._queue(_Op("open", run_id, self.owner or ""))

    async def append(self, run_id: str, kind: str, data: Any) -> int:
        """Queue one event; 0 (its number is given when it is written)."""
        await self.start()
        self._queue(_Op("event", run_id, kind, _dumps(data)))
        return 0

    def publish(self, run_id: str, kind: str, data: Any) -> None:
        """:meth:`append` for a caller that cannot await (the log must be started)."""
        self._queue(_Op("event", run_id, kind, _dumps(data)))

    async def close(self, run_id: str) -> None:
        """No more events will come for ``run_id`` (queued after its events)."""
        await self.start()
        self._queue(_Op("close", run_id))

    async def flush(self) -> None:
        """Return when everything queued so far is written."""
        target = self._queued
        async with self._progress:
            await self._progress.wait_for(lambda: self._written >= target)

    async def _write_loop(self) -> None:
        while True:
            await self._more.wait()
            self._more.clear()
            while self._ops:
                ops = self._ops[:PAGE]
                try:
                    await self._write(ops)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the database went away: keep them, try again
                    log.warning("sea serve: events not written yet (%s)", exc)
                    await self._drop_writer()
                    await asyncio.sleep(0.5)
                    continue
                del self._ops[:len(ops)]
                async with self._progress:
                    self._written += len(ops)
                    self._progress.notify_all()

    async def _drop_writer(self) -> None:
        if self._writer is not None:
            conn, self._writer = self._writer, None
            await conn.close()

    async def _write(self, ops: list[_Op]) -> None:
        """One transaction: the batch's opens, events (numbered after each run's highest
        stored entry, under the run's lock), closes, and a notification per run."""
        if self._writer is None:
            self._writer = await self.connect()
        conn = self._writer
        runs = list(dict.fromkeys(op.run_id for op in ops))
        async with conn.transaction():
            for run_id in runs:
                await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                                   [_LOCK_SPACE, run_id])
            top: dict[str, int] = {}
            for run_id in runs:
                found = await (await conn.execute(
                    "SELECT COALESCE(max(seq), 0) FROM sea_run_events WHERE run_id = %s",
                    [run_id])).fetchone()
                top[run_id] = int(found[0]) if found else 0
            rows = []
            async with conn.cursor() as cur:
                for op in ops:
                    if op.what == "open":
                        await cur.execute("INSERT INTO sea_run_logs (run_id, owner) "
                                          "VALUES (%s, %s) ON CONFLICT DO NOTHING",
                                          [op.run_id, op.kind or None])
                    elif op.what == "event":
                        top[op.run_id] += 1
                        rows.append((op.run_id, top[op.run_id], op.kind, op.data.decode()))
                    if op.what == "close" or (rows and op.what == "open"):
                        await self._insert(cur, rows)
                        rows = []
                    if op.what == "close":
                        await cur.execute("UPDATE sea_run_logs SET closed_at = now() "
                                          "WHERE run_id = %s AND closed_at IS NULL",
                                          [op.run_id])
                await self._insert(cur, rows)
                for run_id in runs:
                    await cur.execute("SELECT pg_notify(%s, %s)", [CHANNEL, run_id])

    @staticmethod
    async def _insert(cur: Any, rows: list[tuple[str, int, str, str]]) -> None:
        if rows:
            await cur.executemany("INSERT INTO sea_run_events (run_id, seq, kind, data) "
                                  "VALUES (%s, %s, %s, %s)", rows)

    # -- reading --------------------------------------------------------------------------

    def _wake(self, run_id: str) -> None:
        waiter = self._waiters.pop(run_id, None)
        if waiter is not None:
            waiter.set()

    async def read(self, run_id: str, after: int, wait_s: float) -> Batch:
        """The entries after ``after`` (waiting up to ``wait_s`` for some while the log is
        open); unknown when the run has no log (never opened, or swept)."""
        await self.start()
        waiter = self._waiters.setdefault(run_id, asyncio.Event())
        batch = await self._select(run_id, after)
        if batch.entries or batch.closed:
            return batch
        try:
            await asyncio.wait_for(waiter.wait(), wait_s)
        except TimeoutError:
            return batch
        return await self._select(run_id, after)

    async def _select(self, run_id: str, after: int) -> Batch:
        async with self._read_lock:
            for attempt in (1, 2):
                try:
                    if self._reader is None:
                        self._reader = await self.connect()
                    return await self._query(run_id, after)
                except Exception:
                    if self._reader is not None:
                        await self._reader.close()
                        self._reader = None
                    if attempt == 2:
                        raise
        raise AssertionError("unreachable")

    async def _query(self, run_id: str, after: int) -> Batch:
        conn = self._reader
        # closed first: if it was, every entry is in the table when they are read
        found = await (await conn.execute(
            "SELECT closed_at IS NOT NULL FROM sea_run_logs WHERE run_id = %s",
            [run_id])).fetchone()
        if found is None:
            return Batch((), True, known=False)
        rows = await (await conn.execute(
            "SELECT seq, kind, data FROM sea_run_events WHERE run_id = %s AND seq > %s "
            "ORDER BY seq LIMIT %s", [run_id, max(after, 0), PAGE])).fetchall()
        entries = tuple(Entry(int(seq), kind, orjson.loads(data)) for seq, kind, data in rows)
        return Batch(entries, bool(found[0]) and len(entries) < PAGE)

    async def closed(self, run_id: str) -> bool:
        """The run's log is closed, or gone."""
        batch = await self._select(run_id, 1 << 62)
        return batch.closed

    async def wait_closed(self, run_id: str, *, poll_s: float = 5.0) -> None:
        """Return when the run's log is closed (or gone)."""
        while not (await self.read(run_id, 1 << 62, poll_s)).closed:
            pass

    # -- retention ------------------------------------------------------------------------

    async def sweep(self) -> int:
        """Remove the logs closed more than ``ttl_s`` ago; how many."""
        conn = await self.connect()
        try:
            async with conn.transaction():
                gone = await (await conn.execute(
                    "DELETE FROM sea_run_logs WHERE closed_at < now() - make_interval(secs => %s) "
                    "RETURNING run_id", [self.ttl_s])).fetchall()
                ids = [row[0] for row in gone]
                if ids:
                    await conn.execute("DELETE FROM sea_run_events WHERE run_id = ANY(%s)",
                                       [ids])
        finally:
            await conn.close()
        return len(ids)

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self._sweep_s)
            try:
                await self.sweep()
            except Exception as exc:  # the next sweep tries again
                log.warning("sea serve: the event logs were not swept (%s)", exc)


def _dumps(data: Any) -> bytes:
    """An entry's data as JSON (what JSON cannot hold written as text)."""
    return orjson.dumps(data, default=str, option=orjson.OPT_NON_STR_KEYS)
