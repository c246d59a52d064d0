"""How a worker runs: its concurrency, attempts and timings."""

from __future__ import annotations

from dataclasses import dataclass

from sea.errors import UsageError


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """How a worker runs.

    Attributes:
        concurrency: Pulses run at once (of different personas).
        attempts: Starts of a pulse before it ends ``failed`` (a retry after an error or
            after its worker died counts).
        stall_timeout: Seconds without a heartbeat after which a worker is taken for dead
            and its pulses go to other workers.
        heartbeat: Seconds between this worker's heartbeats (well under ``stall_timeout``).
        retry_wait: Seconds before a pulse that ended in error is tried again (doubled
            at each further attempt).
        tick: Seconds between looks at the schedules (and at stalled pulses, at most
            every ``stall_timeout / 2``).
    """

    concurrency: int = 1
    attempts: int = 3
    stall_timeout: float = 30.0
    heartbeat: float = 5.0
    retry_wait: float = 1.0
    tick: float = 1.0

    def __post_init__(self) -> None:
        checks = {
            "concurrency": self.concurrency >= 1,
            "attempts": self.attempts >= 1,
            "stall_timeout": self.stall_timeout > 0,
            "heartbeat": 0 < self.heartbeat < self.stall_timeout,
            "retry_wait": self.retry_wait >= 0,
            "tick": self.tick > 0,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise UsageError(
                f"worker option {bad[0]} = {getattr(self, bad[0])!r} is out of range "
                "(concurrency and attempts >= 1; 0 < heartbeat < stall_timeout; tick > 0)",
                code="SEA365",
            )
