"""The numbered event log of each run: what streams subscribe to.

A run's events are appended in order, each with the next sequence number (1, 2, ...); a
stream reads the entries after the last one it saw (replay), then waits for more (live),
until the log is closed and read to its end. Appending never waits for a reader: a slow
subscriber only falls behind, and reads from where it is when it catches up.

:class:`EventLog` is the interface the routes and the hub use; :class:`MemoryEventLog`
keeps the logs in this process (a closed log is kept ``ttl_s`` seconds for late joiners,
then dropped). A PostgreSQL table + ``LISTEN/NOTIFY`` backend fits the same interface, so
that every server process on one database can follow a run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Entry:
    """One event of a run's log."""

    seq: int
    kind: str
    data: Any


@dataclass(frozen=True, slots=True)
class Batch:
    """What a read found: entries after the given one, whether the log is closed (nothing
    more will come), and whether the log is known at all."""

    entries: tuple[Entry, ...]
    closed: bool
    known: bool = True


class EventLog(Protocol):
    """Numbered, append-only event logs, one per run."""

    async def open(self, run_id: str) -> None:
        """Start the empty log of a new run."""

    async def append(self, run_id: str, kind: str, data: Any) -> int:
        """Append one event; its sequence number."""

    async def close(self, run_id: str) -> None:
        """No more events will come for ``run_id``."""

    async def read(self, run_id: str, after: int, wait_s: float) -> Batch:
        """The entries after sequence ``after``; when there are none yet and the log is
        open, wait up to ``wait_s`` seconds for some."""


@dataclass
class _Log:
    entries: list[Entry] = field(default_factory=list)
    closed: bool = False
    grew: asyncio.Event = field(default_factory=asyncio.Event)


class MemoryEventLog:
    """Event logs kept in this process's memory.

    Args:
        ttl_s: How long a closed log stays readable.
        max_entries: The most entries one log keeps; later ones are dropped (a runaway
            pulse does not take the server's memory) and the log then ends with a
            ``log_truncated`` entry.
    """

    def __init__(self, ttl_s: float = 900.0, max_entries: int = 100_000) -> None:
        self._logs: dict[str, _Log] = {}
        self._ttl_s = ttl_s
        self._max = max_entries

    async def open(self, run_id: str) -> None:
        """Start the empty log of a new run."""
        self._logs.setdefault(run_id, _Log())

    async def append(self, run_id: str, kind: str, data: Any) -> int:
        """Append one event and wake the readers; its sequence number (0 when dropped)."""
        log = self._logs.setdefault(run_id, _Log())
        if log.closed or len(log.entries) > self._max:
            return 0
        seq = len(log.entries) + 1
        if len(log.entries) == self._max:
            kind, data = "log_truncated", {"max_entries": self._max}
        log.entries.append(Entry(seq, kind, data))
        self._wake(log)
        return seq

    async def close(self, run_id: str) -> None:
        """Close the log; it is dropped ``ttl_s`` seconds later."""
        log = self._logs.get(run_id)
        if log is None or log.closed:
            return
        log.closed = True
        self._wake(log)
        asyncio.get_running_loop().call_later(self._ttl_s, self._logs.pop, run_id, None)

    async def read(self, run_id: str, after: int, wait_s: float) -> Batch:
        """The entries after ``after`` (waiting up to ``wait_s`` for some while open)."""
        log = self._logs.get(run_id)
        if log is None:
            return Batch((), True, known=False)
        if len(log.entries) <= after and not log.closed:
            grew = log.grew
            try:
                await asyncio.wait_for(grew.wait(), wait_s)
            except TimeoutError:
                pass
        return Batch(tuple(log.entries[max(after, 0):]), log.closed)

    @staticmethod
    def _wake(log: _Log) -> None:
        log.grew.set()
        log.grew = asyncio.Event()

    def sizes(self) -> Mapping[str, int]:
        """How many entries each kept log holds (for tests and operations)."""
        return {run_id: len(log.entries) for run_id, log in self._logs.items()}
