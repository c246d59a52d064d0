"""Durable pulses on PostgreSQL: a queue of pulses, workers that run them, schedules.

The ``workers`` extra (``pip install -e '.[workers]'``) brings procrastinate, a task queue
kept in PostgreSQL tables: a submitted pulse is a job whose lock is its persona, so a
persona's pulses run one at a time, by priority then in submission order, on any number
of worker processes (a running pulse stops for a queued one of higher priority:
:mod:`sea.queue.preempt`). :class:`PulseQueue` submits pulses and schedules and reports on them;
:class:`Worker` runs them on a :class:`~sea.host.runtime.Runtime` and takes over the
pulses of workers that died (:mod:`sea.queue.worker`). Without the extra nothing here is
imported: ``sea run`` and the SQLite store work as before.
"""

from __future__ import annotations

from sea.queue.options import WorkerOptions
from sea.queue.pulses import PulseQueue
from sea.queue.records import (
    STATUSES,
    IntervalBounds,
    PulseRecord,
    PulseStatus,
    Schedule,
    parse_every,
)
from sea.queue.watch import PulseWatch, Watcher
from sea.queue.worker import Worker

__all__ = [
    "STATUSES",
    "IntervalBounds",
    "PulseQueue",
    "PulseRecord",
    "PulseStatus",
    "Schedule",
    "Worker",
    "PulseWatch",
    "Watcher",
    "WorkerOptions",
    "parse_every",
]
