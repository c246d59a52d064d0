"""A SIGTERM drains the server, then it exits 0.

1. **Stop accepting.** The listening socket is closed and idle connections with it; a
   request that still arrives on an open connection answers 503 ``SEA850``.
2. **Grace.** The runs under way get ``grace_s`` seconds to end: a pulse ends (ok, error)
   or reaches its checkpoint (it waits for an approval: any server answers it later). Their
   streams go on and end as always, with their ``end``.
3. **Cut.** A run still under way then is cancelled, its end carrying ``SEA850`` (a
   LangGraph stream's last event is ``error``, SEA's own stream's ``end`` names it; its
   conversation is idle again). The streams still open a moment later (the approvals
   inbox, a stream of a run that goes on elsewhere) get a last ``event: shutdown`` and are
   closed (:func:`sea.serve.ops.shutdown_event`).
4. The app's lifespan ends (the runtime's checkpoints are closed) and the process exits 0.

A second SIGINT (Ctrl+C) stops waiting at once.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from types import FrameType

import uvicorn

from sea.errors import ServerShuttingDown
from sea.serve.hub import RunHub
from sea.serve.ops import Operations

log = logging.getLogger("sea.serve")
TICK_S = 0.05


@dataclass(frozen=True, slots=True)
class Drained:
    """What a drain did: runs that ended within the grace, runs cut, streams told."""

    ended: int
    cut: int
    streams: int


@dataclass
class Drain:
    """The drain of one server.

    Args:
        hub: Its runs.
        ops: Its requests and open streams.
        grace_s: Seconds the runs under way get to end.
        settle_s: Seconds the streams of ended runs get to send their last events before
            the streams still open are told and closed.
    """

    hub: RunHub
    ops: Operations
    grace_s: float = 30.0
    settle_s: float = 1.0

    async def run(self, hurry: Callable[[], bool] = lambda: False) -> Drained:
        """Drain (steps 1 to 3 of the module's docstring; the listener is the caller's).

        Args:
            hurry: True when the drain should stop waiting (a second Ctrl+C).

        Returns:
            What it did.
        """
        self.ops.drain()
        loop = asyncio.get_running_loop()
        at_start = len(self.hub.under_way())
        log.warning("sea serve: draining (%d run(s) under way, %gs grace)", at_start,
                    self.grace_s)
        deadline = loop.time() + self.grace_s
        while self.hub.under_way() and loop.time() < deadline and not hurry():
            await asyncio.sleep(TICK_S)
        cut = self.hub.under_way()
        reason = {"code": ServerShuttingDown.code,
                  "message": f"the server shut down: the run was still under way after "
                  f"its {self.grace_s:g}s grace period, and was cancelled"}
        for run in cut:
            self.hub.cancel(run.run_id, reason)
        for run in cut:
            with suppress(TimeoutError):
                await asyncio.wait_for(self.hub.wait(run.run_id), 10)
        settled = loop.time() + self.settle_s
        while self.ops.streams and loop.time() < settled and not hurry():
            await asyncio.sleep(TICK_S)
        told = await self.ops.end_streams()
        done = Drained(max(at_start - len(cut), 0), len(cut), told)
        log.warning("sea serve: drained (%d run(s) ended, %d cancelled, %d stream(s) "
                    "closed)", done.ended, done.cut, done.streams)
        return done


class DrainingServer(uvicorn.Server):
    """uvicorn's server, which drains (:class:`Drain`) before it shuts down, and exits 0
    after a SIGTERM (uvicorn would raise the signal again once it stopped).

    Args:
        config: uvicorn's configuration.
        drain: The drain to run.
        on_started: Called once the server listens with its signal handlers in place (where
            ``sea serve`` says it listens: a SIGTERM sent on that line is a drain, not a kill).
    """

    def __init__(self, config: uvicorn.Config, drain: Drain,
                 on_started: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.drain = drain
        self.on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Start as uvicorn does, then tell :attr:`on_started`."""
        await super().startup(sockets)
        if self.on_started is not None and not self.should_exit:
            self.on_started()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """A first SIGTERM asks for the drain (and is not raised again at the end)."""
        if sig == signal.SIGTERM and not self.should_exit:
            self.should_exit = True
            return
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop listening, drain, then shut down as uvicorn does."""
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()  # idle ones close now, busy ones after their response
        try:
            await self.drain.run(lambda: self.force_exit)
        except Exception:
            log.exception("sea serve: the drain failed")
        await super().shutdown(sockets)
