"""What a worker tells a host that follows its pulses: each attempt's events and its end.

A :class:`PulseWatch` given to :class:`~sea.queue.worker.Worker` is asked for a
:class:`Watcher` when an attempt of a pulse starts (a first run, a continuation after a
worker died, a retry, the run that answers a waiting pulse); the watcher is called with
each event of the attempt as it happens, then told how the attempt ended and whether that
end is the pulse's last word (``final``: done, waiting, failed, cancelled) or another
attempt follows. A pulse the worker's recovery fails (its workers kept dying) is reported
with :meth:`PulseWatch.lost`. ``sea serve --workers`` publishes the events into its event
log this way (:mod:`sea.serve.relay`); the queue itself knows nothing of the server.
"""

from __future__ import annotations

from typing import Any, Protocol

from sea.engine.events import Event
from sea.host.result import PulseResult


class Watcher(Protocol):
    """Follows one attempt of a pulse."""

    def __call__(self, event: Event) -> None:
        """One event of the attempt, as it happens (must not block)."""

    async def ended(self, result: PulseResult, final: bool) -> None:
        """The attempt ended with ``result``; ``final``: no other attempt follows."""


class PulseWatch(Protocol):
    """Gives a watcher to each attempt of a pulse."""

    async def attempt(self, pulse_id: str, attempt: int) -> Watcher | None:
        """The watcher of the pulse's ``attempt``-th attempt (None: nobody follows it)."""

    async def lost(self, pulse_id: str, error: dict[str, Any]) -> None:
        """The pulse ended failed without an attempt that ended (its workers died)."""
