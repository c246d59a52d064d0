"""A worker's side of ``sea serve --workers``: the events of the pulses it runs go into
the servers' event log, and their ends into the servers' rows.

:class:`Relay` is the :class:`~sea.queue.watch.PulseWatch` ``sea worker`` gives its
:class:`~sea.queue.worker.Worker`. For a pulse a server queued (it has a run row), each
attempt appends the pulse's events to the run's log, in order, as the run hub of an
embedded server does: the conversation's ``values`` after each of its messages is stored,
and at the pulse's end a last ``values`` (with its interrupts when it waits) and ``end``;
then the run's row and its conversation's are updated and the log is closed. An attempt
after the first (the worker died, or the pulse is tried again) first appends an
``attempt`` entry and the conversation's ``values`` as stored (a reply that was being
streamed is not in them): the continued pulse's events follow those already in the log,
from its last checkpoint on. A pulse that no server queued (``sea submit``) is not followed.

The relay also listens for cancel requests (:data:`CANCEL_CHANNEL`) and cancels the pulse
if its worker runs it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from saimemory.base import MessageStore
from sea.engine.events import Event
from sea.host.result import PulseResult
from sea.serve.hub import RUN_STATUS, memory_thread
from sea.serve.pglog import PgEventLog
from sea.serve.records import Records, RunRow, ThreadRow
from sea.serve.thread_state import interrupt_of, messages_of

log = logging.getLogger("sea.serve")

CANCEL_CHANNEL = "sea_run_cancel"
"""Cancel requests: the payload is a pulse id; whoever runs the pulse cancels it."""


class RunWriter:
    """Writes one run's log and rows from its pulse's events (one attempt at a time).

    Args:
        log: The event log.
        records: The server's rows.
        store: The persona store (the conversation's messages).
        run: The run.
        thread: Its conversation.
        history_limit: How many of the newest messages a ``values`` entry shows.
    """

    def __init__(self, log: PgEventLog, records: Records, store: MessageStore, run: RunRow,
                 thread: ThreadRow, history_limit: int = 50) -> None:
        self.log, self.records, self.store = log, records, store
        self.run, self.thread, self.history_limit = run, thread, history_limit
        self._events: asyncio.Queue[Event | None] = asyncio.Queue()
        self._waiting: list[dict[str, Any]] = []
        self._last_values: dict[str, Any] | None = None
        self._pump: asyncio.Task[None] | None = None

    def __call__(self, event: Event) -> None:
        """One event of the pulse (queued: written in order by the writer's task)."""
        if self._pump is None:
            self._pump = asyncio.get_running_loop().create_task(self._write_events())
        self._events.put_nowait(event)

    async def _write_events(self) -> None:
        while (event := await self._events.get()) is not None:
            data = event.to_json()
            await self.log.append(self.run.run_id, event.kind, data)
            if event.kind == "memory_write" and data.get("role") in ("user", "assistant") \
                    and data.get("thread") == memory_thread(self.thread):
                await self.snapshot([])
            elif event.kind == "approval_request":
                self._waiting.append(dict(data["request"]))

    async def snapshot(self, interrupts: list[dict[str, Any]]) -> None:
        """Append the conversation's values, unless they are the last ones appended."""
        stored = await asyncio.to_thread(self.store.recent, self.thread.persona,
                                         limit=self.history_limit * 4,
                                         thread=self.thread.memory_thread)
        values: dict[str, Any] = {"messages": messages_of(stored, self.history_limit)}
        if interrupts:
            values["__interrupt__"] = interrupts
        if values != self._last_values:
            self._last_values = values
            await self.log.append(self.run.run_id, "values", values)

    async def ended(self, result: PulseResult, final: bool) -> None:
        """The attempt ended: its events are written; when ``final``, the run ends."""
        if self._pump is not None:
            self._events.put_nowait(None)
            try:
                await self._pump
            except Exception:
                log.exception("run %s: its events were not all written", self.run.run_id)
        if final:
            await self.finish(result.status, result.error,
                              self._waiting if result.status == "waiting" else [])
        await self._flushed()

    async def _flushed(self, timeout_s: float = 30.0) -> None:
        """Wait (a bounded time: the pulse's worker goes on) for the events to be written."""
        try:
            await asyncio.wait_for(self.log.flush(), timeout_s)
        except TimeoutError:
            log.warning("run %s: its events are not written yet (the database?)",
                        self.run.run_id)

    async def finish(self, status: str, error: dict[str, Any] | None,
                     waiting: list[dict[str, Any]]) -> None:
        """The run's end: last values, its rows, ``end``, its log closed."""
        run, thread = self.run, self.thread
        try:
            interrupts = [interrupt_of(run.pulse_id, request) for request in waiting]
            await self.snapshot(interrupts)
            # the rows first: a client that sees `end` and reads them finds the run ended
            await asyncio.to_thread(self.records.update_run, run.run_id,
                                    status=RUN_STATUS.get(status, "error"),
                                    result={"pulse_status": status}, error=error)
            thread_status = {"waiting": "interrupted", "error": "error"}.get(status, "idle")
            await asyncio.to_thread(self.records.update_thread, thread.thread_id,
                                    status=thread_status,
                                    waiting_pulse=run.pulse_id if interrupts else None,
                                    interrupts=interrupts)
        finally:  # a stream ends with `end` whatever happened to the rows
            await self.log.append(run.run_id, "end", {"status": status, "error": error})
            await self.log.close(run.run_id)
            await self._flushed()


class Relay:
    """Publishes the pulses a worker runs into the servers' event log.

    Args:
        log: The event log (its listener also carries the cancel requests).
        records: The server's rows.
        store: The worker's persona store.
        history_limit: How many of the newest messages a ``values`` entry shows.
    """

    def __init__(self, log: PgEventLog, records: Records, store: MessageStore,
                 history_limit: int = 50) -> None:
        self.log, self.records, self.store = log, records, store
        self.history_limit = history_limit
        self._cancel: Callable[[str], bool] = lambda _: False
        log.listener.subscribe(CANCEL_CHANNEL, self._on_cancel)

    def _on_cancel(self, pulse_id: str) -> None:
        self._cancel(pulse_id)

    def cancel_with(self, cancel: Callable[[str], bool]) -> None:
        """Cancel requests go to ``cancel`` (the worker's)."""
        self._cancel = cancel

    async def start(self) -> None:
        """Listen (cancel requests) and start the log's writer."""
        await self.log.start()

    async def _writer(self, pulse_id: str) -> RunWriter | None:
        runs = await asyncio.to_thread(self.records.pulse_runs, pulse_id)
        if not runs:
            return None
        run = runs[-1]
        thread = await asyncio.to_thread(self.records.thread, run.thread_id)
        if thread is None:
            return None
        return RunWriter(self.log, self.records, self.store, run, thread, self.history_limit)

    async def attempt(self, pulse_id: str, attempt: int) -> RunWriter | None:
        """The writer of the attempt (None: no server queued the pulse)."""
        writer = await self._writer(pulse_id)
        if writer is None:
            return None
        await asyncio.to_thread(self.records.update_run, writer.run.run_id, status="running")
        if attempt > 1:  # then the conversation as stored: a reply cut short is gone
            await self.log.append(writer.run.run_id, "attempt",
                                  {"run_id": writer.run.run_id, "attempt": attempt})
            await writer.snapshot([])
        return writer

    async def lost(self, pulse_id: str, error: dict[str, Any]) -> None:
        """The pulse failed with no attempt that ended: its run ends in error."""
        writer = await self._writer(pulse_id)
        if writer is not None:
            await writer.finish("error", error, [])
