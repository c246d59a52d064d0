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


class ServerCpu:
    """The CPU seconds a local PostgreSQL server's processes use from now on. Its backends
    come and go with their connections: :meth:`sample` while the work runs (a backend that
    came and went between two samples is missed), :meth:`used` after."""

    def __init__(self) -> None:
        self._first = self._now()
        self._last = dict(self._first) if self._first is not None else None

    @staticmethod
    def _now() -> dict[int, float] | None:
        if not _PROC.is_dir():
            return None
        found: dict[int, float] = {}
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
        now = self._now()
        if now is not None and self._last is not None:
            self._last.update(now)

    def used(self) -> float | None:
        """CPU seconds the server used since this object was made (None: no ``/proc``, or
        no server process found here: a server on another machine)."""
        self.sample()
        if not self._first and not self._last:
            return None
        assert self._first is not None and self._last is not None
        return sum(cpu - self._first.get(pid, 0.0) for pid, cpu in self._last.items())
