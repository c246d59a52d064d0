"""CPU seconds that processes of this machine used, read from ``/proc`` (Linux): the
benchmarks' account of where a side's time went (its own processes, the PostgreSQL server's
backends), beside the wall clock. Elsewhere each figure is None and printed as ``n/a``."""

from __future__ import annotations

import os
from pathlib import Path

_PROC = Path("/proc")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu(pid: int) -> float | None:
    """User and system CPU seconds of process ``pid`` so far (None: gone, or no ``/proc``)."""
    try:
        fields = (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS


def processes_cpu(pids: list[int]) -> float | None:
    """The CPU seconds of these processes so far, together (None: one is gone, or no
    ``/proc``)."""
    each = [process_cpu(pid) for pid in pids]
    return None if None in each else sum(cpu for cpu in each if cpu is not None)


class ServerCpu:
    """The CPU seconds a local PostgreSQL server's processes use from now on. Its backends
    come and go with their connections: :meth:`sample` while the work runs (a backend that
    came and went between two samples is missed), :meth:`used` after."""

    def __init__(self) -> None:
        self._first = self._now()
        self._last = dict(self._first)

    @staticmethod
    def _now() -> dict[int, float]:
        """Each server process's CPU so far (none without ``/proc``)."""
        found: dict[int, float] = {}
        if not _PROC.is_dir():
            return found
        for entry in _PROC.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if not (entry / "comm").read_text().startswith("postgres"):
                    continue
            except OSError:
                continue
            cpu = process_cpu(int(entry.name))
            if cpu is not None:
                found[int(entry.name)] = cpu
        return found

    def sample(self) -> None:
        """Note each server process's CPU so far."""
        self._last.update(self._now())

    def used(self) -> float | None:
        """CPU seconds the server used since this object was made (None: no server process
        was found here, a server on another machine or no ``/proc``)."""
        self.sample()
        if not self._last:
            return None
        return sum(cpu - self._first.get(pid, 0.0) for pid, cpu in self._last.items())
