"""The pulse queue: submit pulses and schedules, read how they went.

A submitted pulse is a row of ``sea_pulses`` and a procrastinate job, written in one
transaction (so a pulse is never recorded without its job, nor the reverse). The job's
*lock* is the persona: procrastinate runs jobs of one lock one at a time, by the job's
priority (the pulse's: ``user`` over ``autonomous`` over ``scheduled``,
:func:`~sea.queue.records.job_priority`) and then in the order they were submitted, so a
persona's pulses run in that order on whichever workers are free, and never two at once
(a running pulse of lower priority yields to a higher one: :mod:`sea.queue.preempt`). The
job's arguments are the pulse id and, when the submission ran inside a span, its W3C
``traceparent`` (the worker's pulse continues that trace); everything else is read from
the row.

:class:`PulseQueue` is async and opened with ``async with``. The worker
(:mod:`sea.queue.worker`) registers the tasks that run what is submitted here.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from saimemory.records import Persona
from sea.errors import UsageError
from sea.host.turns import PRIORITIES, Priority, priority_of, priority_rank
from sea.queue.db import (
    NO_QUEUE,
    QueueDsn,
    checked_pool,
    installed,
    prepare,
    require_procrastinate,
)
from sea.queue.records import (
    IntervalBounds,
    PulseRecord,
    PulseStatus,
    Schedule,
    job_priority,
    persona_json,
    persona_of,
    storable,
)

PULSE_TASK = "sea.pulse"
"""Runs (or continues) a submitted pulse: ``pulse_id``."""
RESUME_TASK = "sea.resume"
"""Answers a waiting pulse: ``pulse_id``, ``answer``."""

_PULSE_COLUMNS = (
    "id, persona_json, playbook, input, args, status, attempts, submitted_at, started_at, "
    "ended_at, result, error, schedule_id, worker, priority"
)
NEXT_AT = "CASE WHEN next_at > '0001-01-02' AND next_at < '9999-12-30' THEN next_at END"
"""A schedule's ``next_at``, NULL when Python cannot hold it (``-infinity``, a date BC:
a hand edit), so that one such row does not make every read of the schedules fail."""
_SCHEDULE_COLUMNS = (
    f"id, persona_json, playbook, input, every_s, {NEXT_AT}, last_pulse, runs, skipped, error, "
    "persona, priority"
)


_SUBMIT = """
WITH job AS (SELECT unnest(procrastinate_defer_jobs_v1(%s::procrastinate_job_to_defer_v1[])) AS id)
INSERT INTO sea_pulses (id, persona, persona_json, playbook, input, args, status, schedule_id,
                        options, priority, job_id)
SELECT %s, %s, %s, %s, %s, %s, 'queued', %s, %s, %s, job.id FROM job
"""
"""A pulse's job (procrastinate's own function, as its ``defer_jobs`` query calls it) and
its row with the job's id, in one statement: neither is ever seen without the other."""


def persona_lock(persona: str) -> str:
    """The procrastinate lock of a persona's jobs."""
    return f"sea-persona:{persona}"


class PulseQueue:
    """Pulses and schedules in a PostgreSQL database (procrastinate underneath).

    Args:
        dsn: A ``postgresql://`` DSN (``?schema=NAME`` keeps the queue in that schema;
            default ``public``). Use the store's DSN to keep everything in one place.
        pool_size: The most connections this object opens at once.

    Raises:
        UsageError: not a PostgreSQL DSN (SEA361), or the workers extra is missing (SEA362).
    """

    def __init__(self, dsn: str, *, pool_size: int = 4) -> None:
        self.dsn = QueueDsn(dsn)
        require_procrastinate()
        import procrastinate

        connector = procrastinate.PsycopgConnector(
            conninfo=self.dsn.server,
            kwargs={"options": self.dsn.options},
            configure=_autocommit,
            min_size=1,
            max_size=max(2, pool_size),
            pool_factory=checked_pool,
        )
        self.app = procrastinate.App(connector=connector)
        """The procrastinate app (a worker registers its tasks on it)."""
        self._connector = connector

    async def __aenter__(self) -> PulseQueue:
        await self.open()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def open(self, *, install: bool = True) -> None:
        """Connect, and create the queue's tables if they are missing (unless not
        ``install``: a command that only reads creates nothing).

        Raises:
            UsageError: the server cannot be reached (SEA361); without ``install``, the
                schema holds no queue (SEA392).
        """
        import psycopg

        try:
            async with await psycopg.AsyncConnection.connect(
                self.dsn.server, options=self.dsn.options, autocommit=True
            ) as conn:
                if install:
                    await prepare(conn, self.dsn.schema, self.app.schema_manager.get_schema())
                elif not await installed(conn, self.dsn.schema):
                    raise UsageError(
                        f"no pulse queue in schema {self.dsn.schema!r} of this database: "
                        "nothing was submitted there (sea submit creates it); check --db "
                        "and its ?schema=", code=NO_QUEUE)
            await self.app.open_async()
        except psycopg.Error as exc:
            raise UsageError(f"cannot use the pulse queue's database: {exc}",
                             code="SEA361") from None

    async def close(self) -> None:
        """Close the connections."""
        await self.app.close_async()

    def connection(self) -> Any:
        """A pooled connection (``async with queue.connection() as conn``); its block is
        one transaction."""
        return _in_transaction(self._connector.pool)

    def single(self) -> Any:
        """A pooled connection whose statements each commit on their own (``async with
        queue.single() as conn``), for a block of one statement: it saves the ``BEGIN``
        and ``COMMIT`` round trips of :meth:`connection`. (The pool's connections are in
        autocommit mode, so procrastinate's own one-statement queries, such as fetching
        and finishing a job, save them too.)"""
        return self._connector.pool.connection()

    # -- pulses ---------------------------------------------------------------------------

    async def submit(
        self,
        persona: Persona,
        playbook: str,
        input: str = "",
        *,
        args: Mapping[str, Any] | None = None,
        pulse_id: str | None = None,
        schedule_id: str | None = None,
        thread: str | None = None,
        input_uid: str | None = None,
        input_metadata: Mapping[str, Any] | None = None,
        priority: Priority = "user",
        watched: bool = False,
        conn: Any = None,
    ) -> str:
        """Queue a pulse; its id. The persona's pulses run one at a time, by priority, then
        in the order they were submitted; while one of lower priority runs, it is asked to
        stop at its next safe point for this one (the worker's ``when_preempted`` says
        whether it goes on afterwards or is dropped).

        Args:
            persona: Who thinks (the whole persona is kept: workers need no persona file).
            playbook: The playbook's name, as the workers' library knows it.
            input: What the user says ("" for an autonomous pulse).
            args: The playbook's arguments.
            pulse_id: The pulse's id (default: a new one).
            schedule_id: The schedule that submits it, if any.
            thread: The persona's memory thread it runs in (default: its main one).
            input_uid: The stored input's uid (a client's message id).
            input_metadata: The stored input's metadata.
            priority: ``user`` (a person's turn, the default), ``autonomous`` or
                ``scheduled``.
            watched: Someone follows the pulse through the workers' watch (a server that
                queued it for a run of its own, :mod:`sea.queue.watch`); the workers ask
                their watch about the others not at all.
            conn: A connection whose transaction the submission joins (default: its own).

        Raises:
            UsageError: a text holds a NUL character (SEA368), or an unknown priority
                (SEA369); nothing is queued.
        """
        from psycopg.types.json import Jsonb

        rank = priority_rank(priority)
        options: dict[str, Any] = {key: value for key, value in (
            ("thread", thread), ("input_uid", input_uid),
            ("input_metadata", dict(input_metadata or {}))) if value}
        options["watched"] = watched  # a row without it (an older version's) is asked about
        storable(playbook=playbook, input=input, arguments=dict(args or {}),
                 persona=persona_json(persona), options=options)
        pid = pulse_id or uuid.uuid4().hex
        if conn is None:  # one statement: a transaction of its own
            async with self.single() as own:
                return await self.submit(persona, playbook, input, args=args, pulse_id=pid,
                                         schedule_id=schedule_id, thread=thread,
                                         input_uid=input_uid, input_metadata=input_metadata,
                                         priority=priority, watched=watched, conn=own)
        job = self.app.configure_task(PULSE_TASK, lock=persona_lock(persona.id),
                                      priority=job_priority(rank)).make_new_job(
            pulse_id=pid, **_trace_context())
        await conn.execute(
            _SUBMIT, [[_to_defer(job)], pid, persona.id, Jsonb(persona_json(persona)), playbook,
                      input, Jsonb(dict(args or {})), schedule_id, Jsonb(options), priority])
        return pid

    async def pulse(self, pulse_id: str) -> PulseRecord:
        """One submitted pulse.

        Raises:
            UsageError: no pulse has this id (SEA364).
        """
        async with self.single() as conn:
            found = await (await conn.execute(
                f"SELECT {_PULSE_COLUMNS} FROM sea_pulses WHERE id = %s", [pulse_id]
            )).fetchone()
        if found is None:
            raise UsageError(f"no submitted pulse has the id {pulse_id!r}", code="SEA364")
        return _pulse_record(found)

    async def pulses(
        self,
        *,
        persona: str | None = None,
        status: PulseStatus | Sequence[PulseStatus] | None = None,
        limit: int = 50,
    ) -> list[PulseRecord]:
        """The newest ``limit`` submitted pulses (of a persona, of some statuses), in
        submission order."""
        where: list[str] = ["TRUE"]
        params: list[Any] = []
        if persona is not None:
            where.append("persona = %s")
            params.append(persona)
        if status is not None:
            where.append("status = ANY(%s)")
            params.append([status] if isinstance(status, str) else list(status))
        async with self.single() as conn:
            rows = await (await conn.execute(
                f"SELECT {_PULSE_COLUMNS} FROM sea_pulses WHERE {' AND '.join(where)} "
                "ORDER BY seq DESC LIMIT %s", [*params, limit],
            )).fetchall()
        return [_pulse_record(row) for row in reversed(rows)]

    async def resume(self, pulse_id: str, answer: Any) -> None:
        """Hand a waiting pulse's answer to the workers (it runs in its persona's turn).

        Raises:
            UsageError: no such pulse, or it is not waiting (SEA364); the answer holds a NUL
                character (SEA368).
        """
        storable(answer=answer)
        async with self.connection() as conn:
            found = await (await conn.execute(
                "UPDATE sea_pulses SET status = 'queued' WHERE id = %s AND status = 'waiting' "
                "RETURNING persona, priority", [pulse_id])).fetchone()
            if found is None:
                record = await self.pulse(pulse_id)
                raise UsageError(f"pulse {pulse_id!r} is {record.status}, not waiting for an "
                                 "answer", code="SEA364")
            job = self.app.configure_task(
                RESUME_TASK, lock=persona_lock(found[0]), connection=conn,
                priority=job_priority(_rank(found[1]), going_on=True))
            await job.defer_async(pulse_id=pulse_id, answer=answer, **_trace_context())

    # -- schedules ------------------------------------------------------------------------

    async def add_schedule(
        self,
        persona: Persona,
        playbook: str,
        every_s: float,
        *,
        input: str = "",
        first_at: datetime | None = None,
        bounds: IntervalBounds | None = None,
        priority: Priority = "scheduled",
    ) -> Schedule:
        """Run ``playbook`` for ``persona`` every ``every_s`` seconds (first at
        ``first_at``, default now), on the workers, as pulses of ``priority`` (default
        ``scheduled``). A run that falls due while the persona is busy is skipped, not
        queued up.

        Raises:
            UsageError: the interval is not a finite number of seconds within ``bounds``
                (default :class:`IntervalBounds`: 1 s to 366 days) (SEA363), a text holds
                a NUL character (SEA368), or an unknown priority (SEA369).
        """
        from psycopg.types.json import Jsonb

        priority_rank(priority)
        if isinstance(every_s, bool) or not (isinstance(every_s, int | float)
                                             and math.isfinite(every_s) and every_s > 0):
            raise UsageError(f"a schedule's interval must be a finite number of seconds "
                             f"> 0, not {every_s!r}", code="SEA363")
        (bounds or IntervalBounds()).check(float(every_s), "a schedule's interval")
        storable(playbook=playbook, input=input, persona=persona_json(persona))
        sid = uuid.uuid4().hex[:12]
        start = first_at or datetime.now(UTC)
        async with self.connection() as conn:
            row = await (await conn.execute(
                "INSERT INTO sea_schedules (id, persona, persona_json, playbook, input, every_s, "
                f"next_at, priority) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                f"RETURNING {_SCHEDULE_COLUMNS}",
                [sid, persona.id, Jsonb(persona_json(persona)), playbook, input, every_s, start,
                 priority],
            )).fetchone()
        assert row is not None
        return _schedule(row)

    async def schedules(self, *, persona: str | None = None) -> list[Schedule]:
        """The schedules (of a persona), by when they are next due."""
        where, params = ("persona = %s", [persona]) if persona is not None else ("TRUE", [])
        async with self.connection() as conn:
            rows = await (await conn.execute(
                f"SELECT {_SCHEDULE_COLUMNS} FROM sea_schedules WHERE {where} "
                "ORDER BY next_at, id", params)).fetchall()
        return [_schedule(row) for row in rows]

    async def remove_schedule(self, schedule_id: str) -> None:
        """Stop a schedule (pulses it already submitted run as usual).

        Raises:
            UsageError: no schedule has this id (SEA364).
        """
        async with self.connection() as conn:
            gone = await (await conn.execute(
                "DELETE FROM sea_schedules WHERE id = %s RETURNING id", [schedule_id]
            )).fetchone()
        if gone is None:
            raise UsageError(f"no schedule has the id {schedule_id!r}", code="SEA364")


async def _autocommit(conn: Any) -> None:
    """Each new pooled connection: autocommit (:meth:`PulseQueue.connection` opens a
    transaction; :meth:`PulseQueue.single` and procrastinate's one-statement queries need
    none)."""
    await conn.set_autocommit(True)


@asynccontextmanager
async def _in_transaction(pool: Any) -> AsyncIterator[Any]:
    async with pool.connection() as conn, conn.transaction():
        yield conn


def _to_defer(job: Any) -> Any:
    """A procrastinate job as its ``procrastinate_defer_jobs_v1`` function takes it."""
    from procrastinate.types import JobToDefer
    from psycopg.types.json import Jsonb

    return JobToDefer(queue_name=job.queue, task_name=job.task_name, priority=job.priority,
                      lock=job.lock, queueing_lock=job.queueing_lock,
                      args=Jsonb(job.task_kwargs),  # type: ignore[arg-type]
                      scheduled_at=job.scheduled_at)


def _trace_context() -> dict[str, str]:
    """The job argument that carries the current span across the queue (W3C trace
    context): ``{"traceparent": ...}``, or nothing outside a span."""
    from sea.telemetry.context import traceparent

    found = traceparent()
    return {} if found is None else {"traceparent": found}


def _pulse_record(row: Sequence[Any]) -> PulseRecord:
    return PulseRecord(
        id=row[0], persona=persona_of(row[1]), playbook=row[2], input=row[3],
        args=dict(row[4] or {}), status=row[5], attempts=int(row[6]), submitted_at=row[7],
        started_at=row[8], ended_at=row[9], result=row[10], error=row[11],
        schedule_id=row[12], worker=row[13], priority=priority_of(row[14]),
    )


def _rank(text: Any) -> int:
    return PRIORITIES[priority_of(text)]


def _schedule(row: Sequence[Any]) -> Schedule:
    data = row[1]
    if not (isinstance(data, dict) and isinstance(data.get("id"), str)):
        data = {"id": row[10]}  # a hand edit broke it: the workers say so (SEA366)
    return Schedule(
        id=row[0], persona=persona_of(data), playbook=row[2], input=row[3],
        every_s=float(row[4]), next_at=row[5], last_pulse=row[6], runs=int(row[7]),
        skipped=int(row[8]), error=row[9],
        priority=priority_of(row[11], "scheduled"),
    )
