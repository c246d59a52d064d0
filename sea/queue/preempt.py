"""A worker's side of pulse priorities: a running pulse stops for a queued one of its persona
of higher priority.

A persona's jobs share a procrastinate lock, so a pulse of higher priority queued while one
of lower priority runs cannot start until that job ends. :class:`Preemptions` keeps, for
each pulse a worker runs, its persona and rank, and looks for a waiting job of that persona
that outranks it (:func:`~sea.queue.records.job_priority`): at once when a job is queued
(procrastinate notifies its workers on :data:`sea.queue.db.WAKE_CHANNEL`), and every
``tick`` seconds in case a notification was missed. When it finds one, it tells the runtime's turns
(:meth:`~sea.host.turns.PersonaTurns.waits_elsewhere`): the running pulse stops at its
next safe point, before its next node, with :class:`~sea.errors.PulseCancelled` (``SEA597``); its
checkpoint is whole and what it stored stays.

:meth:`Preemptions.settle` then records the stop with the pulse's row, in one transaction,
as the worker's runtime says (``RuntimeConfig(when_preempted=...)``):

- ``"resume"``: the pulse is ``preempted`` and a new job of it is queued behind the one it
  stopped for, first among the pulses of its own priority; that job goes on from its
  checkpoint (same pulse id: its input and memory writes are not stored twice).
- ``"drop"``: the pulse ends ``dropped``, its error (SEA597) naming the pulse it stopped for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

from sea.host.runtime import Runtime
from sea.host.turns import PREEMPTED, PRIORITIES, Priority
from sea.queue.db import WAKE_CHANNEL
from sea.queue.pulses import PULSE_TASK, RESUME_TASK, PulseQueue, persona_lock
from sea.queue.records import PulseRecord, job_priority

_NAMES: dict[int, Priority] = {rank: cast(Priority, name) for name, rank in PRIORITIES.items()}
_TOP = max(PRIORITIES.values())
"""The rank no waiting job outranks (``job_priority(_TOP + 1)`` is above every job's)."""
_WAITING = """
SELECT DISTINCT ON (job.lock) job.lock, job.priority, job.args->>'pulse_id'
  FROM procrastinate_jobs job
 WHERE job.status = 'todo' AND job.lock = ANY(%s) AND job.task_name = ANY(%s)
   AND (job.scheduled_at IS NULL OR job.scheduled_at <= now())
 ORDER BY job.lock, job.priority DESC, job.id
"""
"""Of each lock, the job that runs next (the highest priority, the oldest)."""


class Preemptions:
    """The pulses a worker runs, and what waits for their personas.

    Args:
        queue: The queue (opened by the caller).
        runtime: The worker's runtime (its turns stop a preempted pulse).
        report: Called with one line per pulse asked to stop.
    """

    def __init__(self, queue: PulseQueue, runtime: Runtime,
                 report: Callable[[str], None]) -> None:
        self.queue, self.runtime, self._report = queue, runtime, report
        self._running: dict[str, tuple[str, int]] = {}  # persona: (pulse id, rank)
        self._asked: dict[str, str] = {}  # persona: the pulse that waits
        self._wake = asyncio.Event()

    def started(self, record: PulseRecord) -> None:
        """The worker runs ``record``'s pulse now: look at what waits for its persona."""
        self._running[record.persona.id] = (record.id, PRIORITIES[record.priority])
        self._wake.set()

    def ended(self, record: PulseRecord) -> None:
        """The worker's attempt of ``record``'s pulse ended."""
        persona = record.persona.id
        if self._running.get(persona, ("", 0))[0] == record.id:
            del self._running[persona]
            self._asked.pop(persona, None)
            self.runtime.turns.waits_elsewhere(persona, None)

    async def look(self) -> None:
        """Ask each running pulse that a waiting job of its persona outranks to stop. A
        pulse of the highest priority cannot be outranked: with only such pulses running,
        nothing is read."""
        running = {persona: held for persona, held in self._running.items()
                   if held[1] < _TOP}
        if not running:
            return
        locks = {persona_lock(persona): persona for persona in running}
        async with self.queue.single() as conn:
            rows = await (await conn.execute(
                _WAITING, [list(locks), [PULSE_TASK, RESUME_TASK]])).fetchall()
        outranking = {locks[lock]: (int(priority), waiting) for lock, priority, waiting in rows
                      if int(priority) >= job_priority(running[locks[lock]][1] + 1)}
        for persona, (pulse_id, _) in running.items():
            if self._running.get(persona, ("", 0))[0] != pulse_id:
                continue  # it ended meanwhile
            if persona not in outranking:  # none waits (any more: it was cancelled)
                gone = self._asked.pop(persona, None)
                if gone is not None:
                    self.runtime.turns.waits_elsewhere(persona, None)
                    self._report(f"pulse {pulse_id} ({persona}): goes on, pulse {gone} "
                                 "no longer waits")
                continue
            priority, waiting = outranking[persona]
            name = _NAMES.get(priority // 2, "user")
            self.runtime.turns.waits_elsewhere(persona, name, waiting)
            if self._asked.get(persona) != waiting:
                self._asked[persona] = waiting
                self._report(f"pulse {pulse_id} ({persona}): asked to stop at its next node "
                             f"for pulse {waiting} ({name})")

    async def watch(self, tick: float) -> None:
        """Look whenever a job is queued or a pulse starts here, and every ``tick`` seconds
        (until cancelled; a lost connection is tried again)."""
        import psycopg

        dsn = self.queue.dsn
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                        dsn.server, options=dsn.options, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {WAKE_CHANNEL}")
                    notes = asyncio.ensure_future(self._notified(conn))
                    try:
                        while True:
                            await self.look()
                            await self._pause(notes, tick)
                            if notes.done():
                                notes.result()  # the connection failed: raise
                    finally:
                        notes.cancel()
                        await asyncio.wait([notes])
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # try again after a tick
                self._report(f"preemption watch: {type(exc).__name__}: {exc}")
                await asyncio.sleep(tick)

    async def _pause(self, notes: asyncio.Future[Any], tick: float) -> None:
        """Until a wake, ``tick`` seconds, or the end of ``notes`` (asyncio.wait, unlike
        wait_for on Python 3.11, never swallows the task's cancellation)."""
        woken: asyncio.Future[Any] = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait([woken, notes], timeout=tick,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
        self._wake.clear()

    async def _notified(self, conn: Any) -> None:
        async for _ in conn.notifies():
            self._wake.set()

    async def settle(self, record: PulseRecord, error: dict[str, Any],
                     summary: dict[str, Any]) -> bool:
        """Record that ``record``'s pulse stopped for a pulse of higher priority: queued
        again to go on after it (True) or dropped (False), as the runtime's
        ``when_preempted`` says."""
        from psycopg.types.json import Jsonb

        waiting = self._asked.get(record.persona.id) or "?"
        rank = PRIORITIES[record.priority]
        going_on = self.runtime.config.busy.preempted == "resume"
        async with self.queue.connection() as conn:
            if going_on:
                error = {**error, "message": f"it stopped at its next node for pulse "
                         f"{waiting} of higher priority; it goes on from there after it"}
                await conn.execute(
                    "UPDATE sea_pulses SET status = 'preempted', error = %s, ended_at = NULL "
                    "WHERE id = %s", [Jsonb(error), record.id])
                job = self.queue.app.configure_task(
                    PULSE_TASK, lock=persona_lock(record.persona.id), connection=conn,
                    priority=job_priority(rank, going_on=True))
                job_id = await job.defer_async(pulse_id=record.id)
                await conn.execute("UPDATE sea_pulses SET job_id = %s WHERE id = %s",
                                   [job_id, record.id])
            else:
                error = {**error, "message": f"it stopped for pulse {waiting} of higher "
                         "priority and was dropped (when_preempted=drop); what it stored "
                         "stays"}
                await conn.execute(
                    "UPDATE sea_pulses SET status = 'dropped', error = %s, result = %s, "
                    "ended_at = now() WHERE id = %s", [Jsonb(error), Jsonb(summary), record.id])
        what = "preempted, goes on later" if going_on else "dropped"
        self._report(f"pulse {record.id} ({record.persona.id}): {what} (for pulse {waiting})")
        return going_on


def preempted(error: dict[str, Any] | None) -> bool:
    """Whether a pulse's error says it stopped for a pulse of higher priority."""
    return error is not None and error.get("code") == PREEMPTED
