"""Many server processes on one PostgreSQL store, with or without ``sea worker``s.

With a PostgreSQL store every ``sea serve`` keeps its runs' events in the database
(:mod:`sea.serve.pglog`) and runs :class:`FleetHub`, whose answers rest on the database,
not on its own memory: whether a persona runs a pulse is read from the runs' rows, a run
is waited for by following its log until it is closed, and a cancel request that does not
find its run in this process is sent to every process (``NOTIFY`` on
:data:`~sea.serve.relay.CANCEL_CHANNEL`): the server or worker that runs the pulse
cancels it.

With ``--workers`` the server runs no pulse: a new run is queued for the workers
(:class:`~sea.queue.PulseQueue`, the run's id is the pulse's), an answer goes to the
queue's resume task, and the workers publish the pulses' events into the same log
(:mod:`sea.serve.relay`). A run still queued is cancelled in the queue by the server
itself.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

from saimemory.base import MessageStore
from saimemory.records import Persona
from sea.errors import (
    NotInterrupted,
    PulseCancelled,
    PulseLost,
    ServerDatabaseError,
    UsageError,
)
from sea.host.runtime import Runtime
from sea.serve.db import ServerDB
from sea.serve.eventlog import EventLog, MemoryEventLog
from sea.serve.hub import RunHub, StartRequest, memory_thread
from sea.serve.owners import Ownership
from sea.serve.pglog import DDL, PgEventLog
from sea.serve.records import PersonaRow, Records, RunRow, ThreadRow
from sea.serve.relay import CANCEL_CHANNEL, RunWriter
from sea.serve.thread_state import replies_by_node

log = logging.getLogger("sea.serve")
MakeHub = Callable[[Runtime, MessageStore, Records, EventLog, int], RunHub]


class FleetHub(RunHub):
    """A run hub whose state is the database's (see the module).

    Args:
        runtime: Runs the pulses (not used with a queue).
        store: The persona store.
        records: The server's rows.
        log: The PostgreSQL event log.
        history_limit: How many of a conversation's newest messages its values show.
        queue: The pulse queue (``--workers``), opened by the caller; None: the pulses
            run in this process.
        repair_s: Seconds between looks for runs whose server died (0: none).
    """

    def __init__(self, runtime: Runtime, store: MessageStore, records: Records,
                 log: PgEventLog, history_limit: int = 50, queue: Any = None, *,
                 repair_s: float = 5.0) -> None:
        super().__init__(runtime, store, records, log, history_limit)
        self._pg, self._queue = log, queue
        self._requests: set[asyncio.Task[None]] = set()
        log.listener.subscribe(CANCEL_CHANNEL, self._cancel_here)  # before it starts
        self.ownership = Ownership(log)
        self._repairs: asyncio.Task[None] | None = None
        if repair_s > 0:
            self._repairs = asyncio.get_running_loop().create_task(self._repair_every(repair_s))

    async def _repair_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await self.repair()
            except Exception as exc:  # the next look tries again
                log.warning("sea serve: runs of stopped servers not looked for (%s)", exc)

    async def repair(self) -> list[str]:
        """End in error the runs whose server died while it ran them; their ids."""
        ended = []
        for run_id in await self.ownership.orphans():
            row = await self._ctx.call(self._ctx.records.run, run_id)
            thread = None if row is None else await self._ctx.call(self._ctx.records.thread,
                                                                  row.thread_id)
            if row is None or thread is None:
                await self._pg.close(run_id)
                continue
            error = {"code": PulseLost.code, "message": "the server that ran the pulse "
                     "stopped before it ended", "playbook": row.playbook, "node": None}
            await self._writer(row, thread).finish("error", error, [])
            ended.append(run_id)
        return ended

    # -- who runs -------------------------------------------------------------------------

    async def _busy(self, persona: str) -> list[RunRow]:
        """The runs of ``persona`` under way in any process (their rows say so)."""
        if self._queue is None:  # the runs it starts are its own: say so, while it lives
            await self.ownership.hold()
        records = self._ctx.records

        def busy() -> list[RunRow]:
            rows = records.db.fetch(
                "SELECT run_id FROM sea_runs WHERE persona = ? "
                "AND status IN ('pending', 'running') ORDER BY created_at", (persona,))
            found = [records.run(row[0]) for row in rows]
            return [run for run in found if run is not None]

        return await self._ctx.call(busy)

    # -- starting, in the queue -----------------------------------------------------------

    async def start(self, thread: ThreadRow, persona: PersonaRow, ask: StartRequest) -> RunRow:
        """Start a pulse: here, or queued for the workers (see :meth:`RunHub.start`)."""
        if self._queue is None:
            return await super().start(thread, persona, ask)
        await self._make_way(persona.id, ask.multitask, ask.priority)
        run_id = str(uuid.uuid4())
        row = RunRow(run_id, thread.thread_id, run_id, persona.id, thread.tenant,
                     ask.assistant, ask.playbook, "pending", dict(ask.metadata),
                     dict(ask.kwargs))
        await self._announce(row, thread, {})
        who = Persona(persona.id, persona.name, persona.system_prompt)
        try:
            await self._queue.submit(who, ask.playbook, ask.input, args=ask.args,
                                     pulse_id=run_id, thread=memory_thread(thread),
                                     input_uid=ask.input_uid,
                                     input_metadata=ask.input_metadata,
                                     priority=ask.priority, watched=True)
        except Exception as exc:
            await self._writer(row, thread).finish("error", _error_of(exc), [])
            raise
        return row

    async def resume(self, thread: ThreadRow, answer: Any, *, assistant: str,
                     metadata: Mapping[str, Any], kwargs: Mapping[str, Any],
                     multitask: str = "reject") -> RunRow:
        """Answer the waiting pulse: here, or through the queue's resume task."""
        if self._queue is None:
            return await super().resume(thread, answer, assistant=assistant,
                                        metadata=metadata, kwargs=kwargs, multitask=multitask)
        pulse_id = thread.waiting_pulse
        if pulse_id is None:
            raise NotInterrupted(f"thread {thread.thread_id!r} waits for no answer: there "
                                 "is nothing to resume")
        await self._make_way(thread.persona, multitask)
        ctx = self._ctx
        earlier = await ctx.call(ctx.store.pulse_messages, thread.persona, pulse_id)
        earlier_runs = await ctx.call(ctx.records.pulse_runs, pulse_id)
        row = RunRow(str(uuid.uuid4()), thread.thread_id, pulse_id, thread.persona,
                     thread.tenant, assistant, earlier_runs[0].playbook if earlier_runs else "",
                     "pending", dict(metadata), {**kwargs, "answer": answer})
        await self._announce(row, thread, replies_by_node(earlier))
        try:
            await self._queue.resume(pulse_id, answer)
        except Exception as exc:
            await self._writer(row, thread).finish("error", _error_of(exc), [])
            raise
        return row

    async def _announce(self, row: RunRow, thread: ThreadRow, visits: dict[str, int]) -> None:
        """The run's row, its conversation busy, its log opened with ``metadata`` and
        written before a worker writes after it."""
        await self._open(row, thread, visits, self._pg)
        try:  # a worker numbers its events after this one
            await asyncio.wait_for(self._pg.flush(), 10)
        except TimeoutError:
            raise ServerDatabaseError("the run's events cannot be written: the database "
                                      "does not answer") from None

    def _writer(self, row: RunRow, thread: ThreadRow) -> RunWriter:
        ctx = self._ctx
        return RunWriter(self._pg, ctx.records, ctx.store, row, thread, ctx.history_limit)

    # -- following ------------------------------------------------------------------------

    def cancel(self, run_id: str, reason: dict[str, Any] | None = None) -> bool:
        """Cancel a run, wherever it runs: True when it runs here, or a request went out
        (it ends ``interrupted`` if it was still running); ``reason``: see
        :meth:`RunHub.cancel` (it travels only to a run of this process)."""
        if super().cancel(run_id, reason):
            return True
        task = asyncio.get_running_loop().create_task(self._cancel_elsewhere(run_id))
        self._requests.add(task)
        task.add_done_callback(self._requests.discard)
        return True

    async def _cancel_elsewhere(self, run_id: str) -> None:
        ctx = self._ctx
        try:
            row = await ctx.call(ctx.records.run, run_id)
            if row is None or row.status not in ("pending", "running"):
                return
            if self._queue is not None and await self._cancel_queued(row):
                return
            async with await self._pg.connect() as conn:
                await conn.execute("SELECT pg_notify(%s, %s)", [CANCEL_CHANNEL, row.pulse_id])
        except Exception:
            log.exception("run %s: the cancel request was not sent", run_id)

    async def _cancel_queued(self, row: RunRow) -> bool:
        """Cancel a run no worker has taken yet: its job, its pulse's row, its end."""
        from psycopg.types.json import Jsonb

        error = {"code": PulseCancelled.code, "message": "the pulse was cancelled before "
                 "a worker took it", "playbook": row.playbook, "node": None}
        async with self._queue.connection() as conn:
            found = await (await conn.execute(
                "UPDATE sea_pulses SET status = 'failed', error = %s, ended_at = now() "
                "WHERE id = %s AND status IN ('queued', 'preempted') RETURNING id",
                [Jsonb(error), row.pulse_id])).fetchone()
            if found is None:
                return False
            await conn.execute(
                "UPDATE procrastinate_jobs SET status = 'cancelled' WHERE status = 'todo' "
                "AND args->>'pulse_id' = %s", [row.pulse_id])
        thread = await self._ctx.call(self._ctx.records.thread, row.thread_id)
        if thread is not None:
            await self._writer(row, thread).finish("cancelled", None, [])
        return True

    def _cancel_here(self, pulse_id: str) -> None:
        for run in [a.run for a in self._active.values() if a.run.pulse_id == pulse_id]:
            super().cancel(run.run_id)

    async def wait(self, run_id: str) -> None:
        """Return when the run is over, wherever it runs (its log is closed)."""
        if self.is_active(run_id):
            await super().wait(run_id)
        else:
            await self._pg.wait_closed(run_id)

    async def close(self) -> None:
        """Cancel the runs under way here; wait for the cancel requests sent."""
        await super().close()
        if self._requests:
            await asyncio.wait(self._requests, timeout=5)
        if self._repairs is not None:
            self._repairs.cancel()
        with suppress(TimeoutError):  # the runs' ends are written before the lock goes
            await asyncio.wait_for(self._pg.flush(), 10)
        await self.ownership.aclose()


def _error_of(exc: Exception) -> dict[str, Any]:
    return {"code": getattr(exc, "code", "SEA500"), "message": str(exc), "playbook": None,
            "node": None}


@dataclass
class FleetParts:
    """The event log and the hub a server runs with."""

    log: EventLog
    make_hub: MakeHub


@asynccontextmanager
async def fleet_parts(location: str, db: ServerDB, *, workers: bool,
                      log_ttl_s: float = 900.0) -> AsyncIterator[FleetParts]:
    """The event log and hub for a store: in memory for a SQLite store; in PostgreSQL
    with :class:`FleetHub` for a PostgreSQL one (queueing for the workers with
    ``workers``).

    Raises:
        UsageError: ``workers`` with a store that is not PostgreSQL.
    """
    if db.backend != "postgres":
        if workers:
            raise UsageError("sea serve --workers needs a PostgreSQL store (--db "
                             "postgresql://...): its workers share the database")
        yield FleetParts(MemoryEventLog(ttl_s=log_ttl_s), RunHub)
        return
    db.create(DDL)
    events = PgEventLog(location, ttl_s=log_ttl_s)
    queue = None
    if workers:
        from sea.queue import PulseQueue

        queue = PulseQueue(location)
        await queue.open()

    def make_hub(runtime: Runtime, store: MessageStore, records: Records, log: EventLog,
                 history_limit: int) -> RunHub:
        return FleetHub(runtime, store, records, events, history_limit, queue)

    try:  # the log starts on first use, once the hub listens for cancel requests too
        yield FleetParts(events, make_hub)
    finally:
        await events.aclose()
        if queue is not None:
            await queue.close()
