"""A worker: runs queued pulses and schedules, and takes over the pulses of dead workers.

One :class:`Worker` runs up to ``concurrency`` pulses at once on one
:class:`~sea.host.runtime.Runtime` (whose checkpoints must be in the queue's PostgreSQL
database and kept after a pulse ends, so any worker can go on with any pulse). Beside
procrastinate's job loop it runs two loops of its own:

- **Recovery.** Procrastinate records a heartbeat per worker. A job whose worker has
  sent none for ``stall_timeout`` seconds (the worker was killed, or lost the database)
  is sent back to the queue, first in its persona's line (it keeps its job id); the
  worker that takes it *continues* the pulse from its last checkpoint
  (``Runtime.arun_pulse(..., recover=True)``): node runs that finished are not run
  again, and the input and memory writes, whose uids derive from the pulse id, are not
  stored twice. After ``attempts`` starts a pulse ends ``failed`` with its last error.
  One worker at a time does this (an advisory lock), so a job is never sent back twice.
- **Schedules.** Every ``tick`` seconds, due schedules are claimed (row locks, so each
  due run is claimed by one worker) and a pulse is submitted for each, unless its persona
  is busy (a pulse of it queued or running, or its store lock held by another process):
  then that run is skipped, not queued up. A schedule whose row cannot run (an interval
  or a persona no schedule can have, left by an older version or a hand edit) is stopped
  with its reason (SEA366); the others run as usual.

A pulse of higher priority queued while one of its persona runs here makes that one stop
at its next node and go on after it, or be dropped (:mod:`sea.queue.preempt`).

A pulse's steps, in order: claim its row (``running``), run or continue it, record how
it ended (``done``/``waiting``/``failed`` with its result or error, or ``queued`` again
for a retry), then remove its checkpoints. A crash between any two steps is repaired
by running the job again: a recorded end is only tidied up, never run twice.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sea.errors import PulseCancelled, PulseLost, UsageError
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.host.turns import priority_of
from sea.queue.options import WorkerOptions
from sea.queue.outcomes import guarded as _guarded
from sea.queue.outcomes import json_safe as _json
from sea.queue.outcomes import summary as _summary
from sea.queue.preempt import Preemptions, preempted
from sea.queue.pulses import NEXT_AT, PULSE_TASK, RESUME_TASK, PulseQueue
from sea.queue.records import TO_RUN, PulseRecord, due_run, persona_of
from sea.queue.watch import PulseWatch, Watcher
from sea.telemetry.context import attached

Report = Callable[[str], None]
_RECOVERY_LOCK = 0x5EA2  # with hashtext(schema): one recovering worker at a time
_STALLED_JOBS = """
SELECT job.id, job.args->>'pulse_id', job.attempts
  FROM procrastinate_jobs job
  LEFT JOIN procrastinate_workers worker ON worker.id = job.worker_id
 WHERE job.status = 'doing' AND job.task_name = ANY(%s)
   AND (worker.id IS NULL OR worker.last_heartbeat < now() - make_interval(secs => %s))
 ORDER BY job.id
   FOR UPDATE OF job SKIP LOCKED
"""
"""The running jobs of pulses whose worker is gone or has been silent too long."""
_ORPHANED_PULSES = """
SELECT pulse.id, pulse.attempts FROM sea_pulses pulse
 WHERE pulse.status IN ('queued', 'running', 'preempted')
   AND NOT EXISTS (SELECT 1 FROM procrastinate_jobs job
                    WHERE job.task_name = ANY(%s) AND job.args->>'pulse_id' = pulse.id
                      AND job.status IN ('todo', 'doing'))
   FOR UPDATE OF pulse SKIP LOCKED
"""
"""Pulses still to run that no job will run: a job records its pulse's end before it
ends, so these are pulses whose job failed past its last attempt without recording it."""
_FINAL_CODES = ("SEA0", "SEA1", "SEA3", "SEA570")
"""Errors that another attempt cannot fix: the playbook documents, usage, and arguments
the playbook does not take."""


class PulseRetry(Exception):
    """A pulse that ended in error goes back to the queue (procrastinate retries the job)."""

    def __init__(self, message: str, wait_s: float) -> None:
        super().__init__(message)
        self.wait_s = wait_s


class PulseFailed(Exception):
    """A pulse ended ``failed``: its job fails too, and is not retried."""


class Worker:
    """Runs the queue's pulses on a runtime.

    Args:
        queue: The queue (opened by the caller).
        runtime: Runs the pulses: its configuration keeps checkpoints
            (``RuntimeConfig(..., keep_checkpoints=True)``) in the queue's PostgreSQL
            database (``checkpoint_path=<the DSN>``); ``sea worker`` builds it as ``sea run``
            does (:mod:`sea.cli._runtime`).
        options: Concurrency, attempts and timings.
        report: Called with one line per pulse that ends (default: nothing).
        watch: Follows each attempt's events and end (:mod:`sea.queue.watch`), if given.

    Raises:
        UsageError: the runtime removes checkpoints of ended pulses (SEA365).
    """

    def __init__(
        self,
        queue: PulseQueue,
        runtime: Runtime,
        options: WorkerOptions | None = None,
        *,
        report: Report | None = None,
        watch: PulseWatch | None = None,
    ) -> None:
        if not runtime.keeps_checkpoints:
            raise UsageError("a worker's runtime must keep checkpoints "
                             "(RuntimeConfig(..., keep_checkpoints=True))", code="SEA365")
        from procrastinate import BaseRetryStrategy, RetryDecision

        self.queue = queue
        self.runtime = runtime
        self.options = options or WorkerOptions()
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        """How the pulse rows name this worker (host and process id)."""
        self._report = report or (lambda _: None)
        self._watch = watch
        self._cancelled: set[str] = set()
        self._stop = asyncio.Event()
        self._preemptions = Preemptions(queue, runtime, self._report)

        settings = self.options

        class _Retry(BaseRetryStrategy):
            def get_retry_decision(self, *, exception: BaseException, job: Any) -> Any:
                if isinstance(exception, PulseRetry):
                    wait = exception.wait_s
                elif isinstance(exception, PulseFailed | asyncio.CancelledError):
                    return None
                elif int(job.attempts) + 1 < settings.attempts:  # e.g. the database was lost
                    wait = settings.retry_wait * 2 ** int(job.attempts)
                else:  # the recovery loop records the pulse failed
                    return None
                return RetryDecision(retry_at=datetime.now(UTC) + timedelta(seconds=wait))

        retry = _Retry()
        queue.app.task(name=PULSE_TASK, pass_context=True, retry=retry)(self._pulse_job)
        queue.app.task(name=RESUME_TASK, pass_context=True, retry=retry)(self._resume_job)

    async def run(self, *, install_signal_handlers: bool = True) -> None:
        """Work until :meth:`stop` (or SIGINT/SIGTERM with the signal handlers): running
        pulses finish first."""
        self._stop.clear()
        loops = [asyncio.create_task(self._every(self._recover, self._recovery_interval())),
                 asyncio.create_task(self._every(self._tick, self.options.tick)),
                 asyncio.create_task(self._preemptions.watch(self.options.tick))]
        jobs = asyncio.create_task(self.queue.app.run_worker_async(
            concurrency=self.options.concurrency,
            name=self.name,
            update_heartbeat_interval=self.options.heartbeat,
            stalled_worker_timeout=self.options.stall_timeout,
            install_signal_handlers=install_signal_handlers,
            fetch_job_polling_interval=1.0,
            abort_job_polling_interval=60.0,
            delete_jobs="successful",
        ))
        stopped = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait([jobs, stopped], return_when=asyncio.FIRST_COMPLETED)
            if not jobs.done():  # stop(): let procrastinate finish the running pulses
                jobs.cancel()
                with suppress(asyncio.CancelledError):
                    await jobs
            else:
                await jobs
        finally:
            stopped.cancel()
            for loop in loops:
                loop.cancel()
            await asyncio.gather(*loops, stopped, return_exceptions=True)

    def stop(self) -> None:
        """Ask :meth:`run` to end (running pulses finish first)."""
        self._stop.set()

    def cancel(self, pulse_id: str) -> bool:
        """Cancel a pulse this worker runs: it ends ``failed`` with SEA590 and is not
        tried again. False if it does not run here."""
        if not self.runtime.cancel(pulse_id):
            return False
        self._cancelled.add(pulse_id)
        return True

    def _recovery_interval(self) -> float:
        return max(0.2, min(self.options.tick, self.options.stall_timeout / 2))

    async def _every(self, step: Callable[[], Any], seconds: float) -> None:
        while True:
            try:
                await step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a loop must survive a lost connection
                self._report(f"{step.__name__}: {type(exc).__name__}: {exc}")
            await asyncio.sleep(seconds)

    # -- jobs -----------------------------------------------------------------------------

    async def _pulse_job(self, context: Any, pulse_id: str,
                         traceparent: str | None = None) -> None:
        attempt = int(context.job.attempts) + 1
        record = await self._claim(pulse_id, attempt, TO_RUN)
        if record is None:
            await self._tidy(pulse_id)
            return

        async def run(watcher: Watcher | None) -> PulseResult:
            with attached(traceparent):  # the pulse continues the submitter's trace
                return await self.runtime.arun_pulse(
                    record.persona, record.playbook, record.input, pulse_id=pulse_id,
                    args=record.args, recover=True, thread=record.options.get("thread"),
                    input_uid=record.options.get("input_uid"),
                    input_metadata=record.options.get("input_metadata"), observe=watcher,
                    priority=record.priority,
                )

        await self._attempt(record, attempt, run, max(attempt, record.attempts))

    async def _resume_job(self, context: Any, pulse_id: str, answer: Any,
                          traceparent: str | None = None) -> None:
        attempt = int(context.job.attempts) + 1
        record = await self._claim(pulse_id, None, ("queued", "running"))
        if record is None:
            await self._tidy(pulse_id)
            return
        record = replace(record, priority="user")  # an answered drive runs as a person's

        async def run(watcher: Watcher | None) -> PulseResult:
            result = None
            with attached(traceparent):  # the answer's request is the resumed drive's parent
                if attempt > 1:  # its first try may have got the answer through, then died
                    result = await self.runtime.arun_continue(pulse_id, observe=watcher)
                if result is None or result.status == "waiting":
                    result = await self.runtime.arun_resume(pulse_id, answer, observe=watcher)
            return result

        await self._attempt(record, attempt, run)

    async def _attempt(self, record: PulseRecord, attempt: int,
                       run: Callable[[Watcher | None], Awaitable[PulseResult]],
                       shown: int | None = None) -> None:
        """Run one attempt, watched (as attempt ``shown``, default ``attempt``: a preempted
        pulse's row counts more starts than its job) if a watch is given, and settle it."""
        watcher = None
        if self._watch is not None and record.options.get("watched", True):
            watcher = await self._watch.attempt(record.id, shown or attempt)
        self._preemptions.started(record)
        result = await _guarded(record, lambda: run(watcher))
        final = False
        try:
            if preempted(result.error) and record.id not in self._cancelled:
                final = not await self._preemptions.settle(record, result.error or {},
                                                            _summary(result))
                return
            await self._settle(record, result, attempt)
            final = True
        except PulseFailed:
            final = True
            raise
        finally:
            self._preemptions.ended(record)
            self._cancelled.discard(record.id)
            if watcher is not None:
                await watcher.ended(result, final)

    async def _claim(
        self, pulse_id: str, attempt: int | None, statuses: tuple[str, ...]
    ) -> PulseRecord | None:
        """Mark the pulse running (its row), unless it already ended or is unknown."""
        async with self.queue.single() as conn:
            row = await (await conn.execute(
                "UPDATE sea_pulses SET status = 'running', worker = %s, "
                "attempts = GREATEST(%s, attempts + 1), started_at = now(), ended_at = NULL "
                "WHERE id = %s AND status = ANY(%s) RETURNING persona_json, playbook, input, "
                "args, attempts, submitted_at, options, priority",
                [self.name, attempt, pulse_id, list(statuses)],
            )).fetchone()
        if row is None:
            return None
        return PulseRecord(
            id=pulse_id, persona=persona_of(row[0]), playbook=row[1], input=row[2],
            args=dict(row[3] or {}), status="running", attempts=int(row[4]),
            submitted_at=row[5], started_at=None, ended_at=None, result=None, error=None,
            worker=self.name, options=dict(row[6] or {}), priority=priority_of(row[7]),
        )

    async def _tidy(self, pulse_id: str) -> None:
        """A job of a pulse that had already ended: remove what is left of its run."""
        async with self.queue.single() as conn:
            row = await (await conn.execute(
                "SELECT status FROM sea_pulses WHERE id = %s", [pulse_id])).fetchone()
        if row is not None and row[0] in ("done", "failed"):
            await self.runtime.aforget(pulse_id)

    async def _settle(self, record: PulseRecord, result: PulseResult, attempt: int) -> None:
        """Record how the pulse's run ended; raise to have the job retried or failed."""
        pulse_id = record.id
        if result.status == "cancelled" and pulse_id in self._cancelled:
            error = {"code": PulseCancelled.code, "message": "the pulse was cancelled",
                     "playbook": record.playbook, "node": None}
            await self._record(pulse_id, "failed", _summary(result), error)
            await self.runtime.aforget(pulse_id)
            self._report(f"pulse {pulse_id} ({record.persona.id}): cancelled")
            raise PulseFailed(f"{PulseCancelled.code}: the pulse was cancelled")
        if result.status in ("ok", "waiting"):
            status = "done" if result.status == "ok" else "waiting"
            await self._record(pulse_id, status, _summary(result), None)
            if status == "done":
                await self.runtime.aforget(pulse_id)
            self._report(f"pulse {pulse_id} ({record.persona.id}): {status}")
            return
        error = result.error or {"code": PulseLost.code, "message": "the pulse was cancelled "
                                 "(its worker is stopping)", "playbook": None, "node": None}
        final = str(error.get("code", "")).startswith(_FINAL_CODES)
        if attempt < self.options.attempts and not final:
            await self._record(pulse_id, "queued", None, error)
            wait = self.options.retry_wait * 2 ** (attempt - 1)
            self._report(f"pulse {pulse_id} ({record.persona.id}): attempt {attempt} failed "
                         f"({error.get('code')}: {error.get('message')}); again in {wait:g}s")
            raise PulseRetry(str(error.get("message")), wait)
        await self._record(pulse_id, "failed", _summary(result), error)
        await self.runtime.aforget(pulse_id)
        self._report(f"pulse {pulse_id} ({record.persona.id}): failed after {attempt} "
                     f"attempt(s): {error.get('code')}: {error.get('message')}")
        raise PulseFailed(f"{error.get('code')}: {error.get('message')}")

    async def _record(
        self, pulse_id: str, status: str, result: dict[str, Any] | None,
        error: dict[str, Any] | None, *, conn: Any = None,
    ) -> None:
        """Write how a pulse's attempt ended to its row (in ``conn``'s transaction, if
        given)."""
        if conn is None:
            async with self.queue.single() as own:
                await self._record(pulse_id, status, result, error, conn=own)
            return
        from psycopg.types.json import Jsonb

        ended = status in ("done", "failed", "waiting")
        await conn.execute(
            "UPDATE sea_pulses SET status = %s, result = COALESCE(%s, result), "
            "error = %s, ended_at = CASE WHEN %s THEN now() END WHERE id = %s",
            [status, None if result is None else Jsonb(result),
             None if error is None else Jsonb(_json(error)), ended, pulse_id],
        )

    # -- recovery -------------------------------------------------------------------------

    async def _recover(self) -> None:
        """Send the pulses of dead workers back to the queue (or fail them after the last
        attempt), and fail the pulses whose job ended without recording their end.

        It runs under the recovery lock (one worker at a time) and in one transaction:
        a job and its pulse's row change together, and only while the job is still
        ``doing`` for a silent worker. A worker that was only slow, and ends the pulse
        meanwhile, keeps its recorded end (the job it finishes is not sent back).
        """
        failed: list[tuple[str, dict[str, Any]]] = []
        async with self.queue.connection() as conn:
            got = await (await conn.execute(
                "SELECT pg_try_advisory_xact_lock(%s, hashtext(%s))",
                [_RECOVERY_LOCK, self.queue.dsn.schema])).fetchone()
            if got is None or not got[0]:
                return
            stalled = await (await conn.execute(
                _STALLED_JOBS, [[PULSE_TASK, RESUME_TASK], self.options.stall_timeout]
            )).fetchall()
            for job_id, pulse_id, attempts in stalled:
                lost = await self._take_over(conn, int(job_id), str(pulse_id), int(attempts))
                if lost is not None:
                    failed.append((str(pulse_id), lost))
            orphans = await (await conn.execute(
                _ORPHANED_PULSES, [[PULSE_TASK, RESUME_TASK]])).fetchall()
            for pulse_id, attempts in orphans:
                error = {"code": PulseLost.code, "playbook": None, "node": None,
                         "message": f"its job ended during attempt {attempts} of "
                                    f"{self.options.attempts} without recording how the "
                                    "pulse ended (the worker's log tells why)"}
                await self._record(str(pulse_id), "failed", None, error, conn=conn)
                failed.append((str(pulse_id), error))
                self._report(f"pulse {pulse_id}: failed: {error['message']}")
        for pulse_id, error in failed:
            await self.runtime.aforget(pulse_id)
            if self._watch is not None:
                await self._watch.lost(pulse_id, error)

    async def _take_over(self, conn: Any, job_id: int, pulse_id: str,
                         attempts: int) -> dict[str, Any] | None:
        """Send a dead worker's job back to the queue, first in its persona's line, or
        fail it after the last attempt (its error then), with its pulse's row."""
        attempt = attempts + 1
        error = {"code": PulseLost.code, "playbook": None, "node": None,
                 "message": f"its worker stopped during attempt {attempt} of "
                            f"{self.options.attempts} (no heartbeat for "
                            f"{self.options.stall_timeout:g}s)"}
        ended = await (await conn.execute(
            "SELECT status IN ('done', 'failed', 'waiting') FROM sea_pulses WHERE id = %s",
            [pulse_id])).fetchone()
        if attempt >= self.options.attempts and not (ended and ended[0]):
            await conn.execute("SELECT procrastinate_finish_job_v1(%s, 'failed', false)",
                               [job_id])
            await self._record(pulse_id, "failed", None, error, conn=conn)
            self._report(f"pulse {pulse_id}: failed: {error['message']}")
            return error
        from psycopg.types.json import Jsonb

        # a pulse whose end was recorded goes back too: its next job only tidies up
        await conn.execute("SELECT procrastinate_retry_job_v2(%s, now(), NULL, NULL, NULL)",
                           [job_id])
        await conn.execute(
            "UPDATE sea_pulses SET status = 'queued', error = %s WHERE id = %s "
            "AND status = 'running'", [Jsonb(_json(error)), pulse_id])
        self._report(f"pulse {pulse_id}: {error['message']}; back in the queue")
        return None

    # -- schedules ------------------------------------------------------------------------

    async def _tick(self) -> None:
        """Submit a pulse for each due schedule whose persona is free; skip the others.
        A schedule whose row cannot run (an interval or a persona an older version or a
        hand edit left) is stopped with the reason in its ``error`` and reported once;
        the others run as usual."""
        async with self.queue.connection() as conn:
            rows = await (await conn.execute(
                f"SELECT id, persona_json, playbook, input, every_s, {NEXT_AT}, now(), priority "
                "FROM sea_schedules WHERE next_at <= now() AND error IS NULL ORDER BY next_at "
                "FOR UPDATE SKIP LOCKED LIMIT 100")).fetchall()
            for sid, persona_data, playbook, text, every_s, due, now, priority in rows:
                try:
                    persona, following = due_run(sid, persona_data, float(every_s), due, now)
                except UsageError as exc:
                    await conn.execute("UPDATE sea_schedules SET error = %s WHERE id = %s",
                                       [f"{exc.code} {exc.message}", sid])
                    self._report(f"{exc.code}: {exc.message}")
                    continue
                if await self._busy(conn, persona.id):
                    await conn.execute(
                        "UPDATE sea_schedules SET next_at = %s, skipped = skipped + 1 "
                        "WHERE id = %s", [following, sid])
                    continue
                pid = await self.queue.submit(persona, playbook, text, schedule_id=sid, conn=conn,
                                              priority=priority_of(priority, "scheduled"))
                await conn.execute(
                    "UPDATE sea_schedules SET next_at = %s, last_pulse = %s, runs = runs + 1 "
                    "WHERE id = %s", [following, pid, sid])

    async def _busy(self, conn: Any, persona: str) -> bool:
        """A pulse of the persona is queued or running, or another process holds its
        store lock (a ``sea run``)."""
        row = await (await conn.execute(
            "SELECT EXISTS (SELECT 1 FROM sea_pulses WHERE persona = %s "
            "AND status IN ('queued', 'running', 'preempted'))", [persona])).fetchone()
        if row is not None and row[0]:
            return True
        if self.runtime.turns.busy(persona):
            return True
        lock = await asyncio.to_thread(self.runtime.services.store.persona_lock, persona)
        try:
            return not await asyncio.to_thread(lock.try_acquire)
        finally:
            await asyncio.to_thread(lock.release)
