"""The RunHub: pulses run as tasks of the server, not of the HTTP request that started them.

A run's task drives the pulse (``Runtime.astream_pulse`` or ``astream_resume``) and appends
each event to the run's numbered log (:mod:`sea.serve.eventlog`), beside the entries the
hub writes itself: ``metadata`` first, a ``values`` snapshot of the conversation whenever
its messages change and at the end (with the pulse's interrupts), and ``end`` last. Streams
subscribe to the log, so a client that drops reconnects with ``Last-Event-ID`` and misses
nothing, and a slow one never slows the pulse. The run's row (and its conversation's) in
the server's tables is kept up to date, so lists survive a restart.

One pulse at a time per persona: a run asked to be refused while its persona runs another
(``multitask_strategy`` reject) is refused with :class:`sea.errors.RunConflict`; one that
is asked to wait (``enqueue``) waits for the persona's turn in the runtime.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio.to_thread

from saimemory.base import MessageStore
from saimemory.records import Persona
from sea.engine.events import Event
from sea.errors import InvalidRequest, NotInterrupted, RunConflict
from sea.host.runtime import Runtime
from sea.host.turns import PRIORITIES, Priority, priority_of
from sea.serve.eventlog import EventLog
from sea.serve.records import PersonaRow, Records, RunRow, ThreadRow
from sea.serve.thread_state import interrupt_of, messages_of, replies_by_node

log = logging.getLogger("sea.serve")
T = TypeVar("T")

RUN_STATUS = {"ok": "success", "waiting": "success", "error": "error",
              "cancelled": "interrupted"}
"""A pulse's end as a LangGraph run status (a run that ends waiting is a success; its
conversation is then ``interrupted``)."""
STRATEGIES = ("reject", "enqueue", "interrupt", "rollback")


@dataclass
class _Active:
    run: RunRow
    task: asyncio.Task[None] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    last_values: dict[str, Any] | None = None
    reason: dict[str, Any] | None = None
    """Why the server cancelled it (SEA's error), when it did (a shutdown)."""


@dataclass(frozen=True, slots=True)
class StartRequest:
    """What a new run is asked to do."""

    playbook: str
    assistant: str
    input: str
    input_uid: str | None = None
    input_metadata: Mapping[str, Any] = field(default_factory=dict)
    args: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    multitask: str = "reject"
    priority: Priority = "user"
    """A client's run is a person's turn; ``/v1`` may say otherwise (``autonomous``,
    ``scheduled``): a run of higher priority makes a running one of lower priority of the
    persona stop at its next node, and is never refused for it."""


def memory_thread(thread: ThreadRow) -> str | None:
    """The memory thread a conversation's pulses run in (None: the persona's main one)."""
    return None if thread.metadata.get("main") else thread.memory_thread


class _Parts:
    """What the hub works with (the server's context gives them)."""

    def __init__(self, runtime: Runtime, store: MessageStore, records: Records, log: EventLog,
                 history_limit: int) -> None:
        self.runtime, self.store, self.records, self.log = runtime, store, records, log
        self.history_limit = history_limit

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))


class RunHub:
    """Starts, resumes, cancels and follows runs.

    Args:
        runtime: Runs the pulses.
        store: The persona store the runtime writes (the conversations' messages).
        records: The server's rows.
        log: The runs' event logs.
        history_limit: How many of a conversation's newest messages its values show.
    """

    def __init__(self, runtime: Runtime, store: MessageStore, records: Records, log: EventLog,
                 history_limit: int = 50) -> None:
        self._ctx = _Parts(runtime, store, records, log, history_limit)
        self._active: dict[str, _Active] = {}

    # -- starting -----------------------------------------------------------------------------

    def running(self, persona: str) -> list[RunRow]:
        """The runs of ``persona`` under way in this server."""
        return [a.run for a in self._active.values() if a.run.persona == persona]

    async def start(self, thread: ThreadRow, persona: PersonaRow, ask: StartRequest) -> RunRow:
        """Start a pulse in the conversation ``thread``.

        Raises:
            RunConflict: the persona runs another pulse and ``ask.multitask`` is reject.
            InvalidRequest: an unknown or unsupported strategy.
        """
        await self._make_way(persona.id, ask.multitask, ask.priority)
        run_id = str(uuid.uuid4())
        row = RunRow(run_id, thread.thread_id, run_id, persona.id, thread.tenant, ask.assistant,
                     ask.playbook, "pending", dict(ask.metadata), dict(ask.kwargs))
        who = Persona(persona.id, persona.name, persona.system_prompt)
        events = self._ctx.runtime.astream_pulse(
            who, ask.playbook, ask.input, pulse_id=run_id, args=ask.args,
            thread=memory_thread(thread), input_uid=ask.input_uid,
            input_metadata=ask.input_metadata, priority=ask.priority)
        return await self._launch(row, thread, events, {})

    async def resume(self, thread: ThreadRow, answer: Any, *, assistant: str,
                     metadata: Mapping[str, Any], kwargs: Mapping[str, Any],
                     multitask: str = "reject") -> RunRow:
        """Answer the approval request the conversation's pulse waits on.

        Raises:
            NotInterrupted: no pulse of the conversation waits.
            RunConflict: the persona runs another pulse and ``multitask`` is reject.
        """
        pulse_id = thread.waiting_pulse
        if pulse_id is None:
            raise NotInterrupted(f"thread {thread.thread_id!r} waits for no answer: there "
                                 "is nothing to resume")
        await self._make_way(thread.persona, multitask)
        earlier = await self._ctx.call(self._ctx.store.pulse_messages, thread.persona, pulse_id)
        earlier_runs = await self._ctx.call(self._ctx.records.pulse_runs, pulse_id)
        playbook = earlier_runs[0].playbook if earlier_runs else ""
        run_id = str(uuid.uuid4())
        row = RunRow(run_id, thread.thread_id, pulse_id, thread.persona, thread.tenant,
                     assistant, playbook, "pending", dict(metadata),
                     {**kwargs, "answer": answer})  # the record of who answered what
        events = self._ctx.runtime.astream_resume(pulse_id, answer)
        return await self._launch(row, thread, events, replies_by_node(earlier))

    async def _make_way(self, persona: str, strategy: str, priority: Priority = "user") -> None:
        if strategy not in STRATEGIES:
            raise InvalidRequest(f"unknown multitask_strategy {strategy!r}: use reject, "
                                 "enqueue or interrupt")
        rank = PRIORITIES[priority]  # runs of lower priority stop for it: they are no bar
        busy = [run for run in await self._busy(persona)
                if PRIORITIES[priority_of(run.kwargs.get("priority"))] >= rank]
        if not busy or strategy == "enqueue":
            return
        if strategy == "reject":
            raise RunConflict(
                f"persona {persona!r} is running another pulse (run {busy[0].run_id}); SEA "
                "runs one pulse per persona at a time: try again when it ends, or send "
                "multitask_strategy=enqueue to wait for it")
        if strategy == "rollback":
            raise InvalidRequest("multitask_strategy=rollback would undo a pulse's memory "
                                 "writes, and SAIMemory is append-only: use interrupt")
        for run in busy:  # interrupt: cancel what runs, then go
            self.cancel(run.run_id)
        for run in busy:
            await self.wait(run.run_id)

    async def _busy(self, persona: str) -> list[RunRow]:
        """The runs of ``persona`` under way (a hub of many processes reads the rows)."""
        return self.running(persona)

    async def _open(self, row: RunRow, thread: ThreadRow, visits: dict[str, int],
                    log: EventLog) -> None:
        """Record a new run, mark its conversation busy, and open its log in ``log`` with
        the ``metadata`` entry every stream starts with."""
        ctx = self._ctx
        await ctx.call(ctx.records.add_run, row)
        await ctx.call(ctx.records.update_thread, thread.thread_id, status="busy",
                       waiting_pulse=None, interrupts=[])
        await log.open(row.run_id)
        await log.append(row.run_id, "metadata", {
            "run_id": row.run_id, "thread_id": row.thread_id, "pulse_id": row.pulse_id,
            "attempt": 1, "visits": visits})

    async def _launch(self, row: RunRow, thread: ThreadRow,
                      events: AsyncGenerator[Event, None], visits: dict[str, int]) -> RunRow:
        await self._open(row, thread, visits, self._ctx.log)
        active = self._active[row.run_id] = _Active(row)
        active.task = asyncio.create_task(self._drive(active, thread, events))
        return row

    # -- following ----------------------------------------------------------------------------

    def cancel(self, run_id: str, reason: dict[str, Any] | None = None) -> bool:
        """Cancel a run under way in this server (it ends ``interrupted``); False if it is
        not running here. ``reason`` (SEA's ``{code, message}``) becomes the error its end
        carries: the server, not a client, cancelled it."""
        active = self._active.get(run_id)
        if active is None:
            return False
        active.reason = reason or active.reason
        if not self._ctx.runtime.cancel(active.run.pulse_id) and active.task is not None:
            active.task.cancel()  # not started in the runtime yet (waiting for its turn)
        return True

    async def wait(self, run_id: str) -> None:
        """Return when the run is over (at once when it is not running here)."""
        active = self._active.get(run_id)
        if active is not None:
            await active.done.wait()

    def under_way(self) -> list[RunRow]:
        """Every run under way in this server."""
        return [active.run for active in self._active.values()]

    def is_active(self, run_id: str) -> bool:
        """The run is under way in this server."""
        return run_id in self._active

    async def close(self) -> None:
        """Cancel every run under way and wait for them to end."""
        for run_id in list(self._active):
            self.cancel(run_id)
        for active in list(self._active.values()):
            if active.task is not None:
                with suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(active.task), 10)

    # -- driving ------------------------------------------------------------------------------

    async def _drive(self, active: _Active, thread: ThreadRow,
                     events: AsyncGenerator[Event, None]) -> None:
        ctx, row = self._ctx, active.run
        status, error = "error", None
        waiting: list[dict[str, Any]] = []
        try:
            async for event in events:
                data = event.to_json()
                await ctx.log.append(row.run_id, event.kind, data)  # streams first, then rows
                if event.kind == "pulse_start":
                    await ctx.call(ctx.records.update_run, row.run_id, status="running")
                if event.kind == "memory_write" and data.get("thread") == memory_thread(thread) \
                        and data.get("role") in ("user", "assistant"):
                    await self._snapshot(row, thread, [])
                elif event.kind == "approval_request":
                    waiting.append(dict(data["request"]))
                elif event.kind == "pulse_end":
                    status, error = str(data["status"]), data.get("error")
        except asyncio.CancelledError:
            status = "cancelled"
        except Exception as exc:  # the pulse could not start (e.g. it runs already)
            log.exception("run %s failed", row.run_id)
            code = getattr(exc, "code", "SEA500")
            status, error = "error", {"code": code, "message": str(exc)}
        finally:
            if status == "cancelled" and active.reason is not None:
                error = active.reason
            await asyncio.shield(self._finish(active, thread, status, error, waiting))

    async def _finish(self, active: _Active, thread: ThreadRow, status: str,
                      error: dict[str, Any] | None, waiting: list[dict[str, Any]]) -> None:
        ctx, row = self._ctx, active.run
        try:
            if status != "waiting":
                waiting = []
            interrupts = [interrupt_of(row.pulse_id, request) for request in waiting]
            await self._snapshot(row, thread, interrupts)
            await ctx.call(ctx.records.update_run, row.run_id,
                           status=RUN_STATUS.get(status, "error"),
                           result={"pulse_status": status}, error=error)
            thread_status = {"waiting": "interrupted", "error": "error"}.get(status, "idle")
            await ctx.call(ctx.records.update_thread, thread.thread_id, status=thread_status,
                           waiting_pulse=row.pulse_id if interrupts else None,
                           interrupts=interrupts)
        except Exception:
            log.exception("run %s: its end could not be recorded", row.run_id)
        finally:  # a client that sees the end finds the rows, and the persona, free
            self._active.pop(row.run_id, None)
            await ctx.log.append(row.run_id, "end", {"status": status, "error": error})
            await ctx.log.close(row.run_id)
            active.done.set()

    async def _snapshot(self, row: RunRow, thread: ThreadRow,
                        interrupts: list[dict[str, Any]]) -> None:
        """Append the conversation's values to the run's log, unless they are the same
        as the last ones appended."""
        values = await self.values(thread)
        if interrupts:
            values["__interrupt__"] = interrupts
        active = self._active.get(row.run_id)
        if active is not None:
            if active.last_values == values:
                return
            active.last_values = values
        await self._ctx.log.append(row.run_id, "values", values)

    async def values(self, thread: ThreadRow) -> dict[str, Any]:
        """The conversation's state values: its newest messages."""
        ctx = self._ctx
        limit = ctx.history_limit
        stored = await ctx.call(ctx.store.recent, thread.persona, limit=limit * 4,
                                thread=thread.memory_thread)
        return {"messages": messages_of(stored, limit)}
