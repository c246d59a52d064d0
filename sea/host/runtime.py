"""The host API: run, stream, cancel, resume and continue pulses.

A pulse is one run of a top-level playbook for one persona. The runtime stores the user's
input first (tag ``conversation``), whatever the pulse does later, then runs the compiled
graph with a LangGraph checkpointer (thread id = pulse id), so a pulse that waits for an
approval can be resumed later by another process (:meth:`Runtime.arun_resume`). A pulse
started with ``recover=True`` saves a checkpoint after every step, so when its process dies
it can be continued from the last one (:meth:`Runtime.arun_continue`, or the same start
again); any other pulse writes its checkpoint only when it waits or ends (LangGraph's
``exit`` durability), which spares it a database write per step: a killed one is simply
gone, as if never begun, except for its input and what it had stored. Such a pulse needs no
checkpoint until a node that may pause for a person (:mod:`sea.engine.waits`) is about to
run: until then it runs without a LangGraph run (:mod:`sea.engine.direct`), and there its
graph takes over, its first checkpoint holding the state as if the nodes that ran had run in
it (a pulse that reaches no such node makes no checkpoint at all); each called playbook that
cannot pause runs without a LangGraph run too. An ``exec`` node may pause where the playbook
it is about to run can, not where any playbook of its list could.

A pulse drives only while it holds its persona's turn (:mod:`sea.host.turns`): one pulse
at a time per persona, in this runtime and in every process on the same store; the host
chooses whether a pulse waits for the turn or fails with :class:`sea.errors.PersonaBusy`.

Cancellation (:meth:`Runtime.cancel`) cancels the pulse's task: it is never routed to an
``error_next`` and never swallowed by a sub-playbook call, and a partly streamed reply is
**not stored** (the tokens already sent stay sent; memory gets nothing of that reply).

The methods follow one scheme: ``[a]{run,stream}_{pulse,resume,continue}``. ``pulse``
starts one, ``resume`` answers a waiting one, ``continue`` goes on from the last checkpoint;
``run`` returns the :class:`~sea.host.result.PulseResult` at the end, ``stream`` yields the
events as they happen; the ``a`` form is a coroutine (or an async iterator) for a host with
an event loop, the other one its blocking twin (:mod:`sea.host.blocking`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import suppress
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from saimemory.records import Persona
from sea.engine.events import Event
from sea.engine.pulse import Services
from sea.errors import UsageError
from sea.host.blocking import LoopThread, blocking, blocking_stream
from sea.host.config import RuntimeConfig
from sea.host.drive import Driver
from sea.host.result import PulseResult, Status, pulse_result
from sea.host.runs import Run
from sea.host.turns import BusyPolicy, PersonaTurns, Priority

__all__ = ["BusyPolicy", "PulseResult", "Runtime", "RuntimeConfig", "Status"]

Sink = Callable[[Event | None], None]
Observer = Callable[[Event], None]
"""Called with each event of a pulse run to its end (``arun_pulse(..., observe=)``)."""


class Runtime:
    """Runs playbooks as pulses for personas, as its configuration says.

    What is the same for every pulse (tools, their schemas, gates, the compiler and its
    cache) is wired once, here; a pulse makes only what is its own.

    Args:
        config: What the runtime is: store, models, tools, playbooks, checkpoints,
            workspace, limits and policies (:class:`~sea.host.config.RuntimeConfig`).
        checkpointer: A LangGraph checkpointer used as is (the host owns its lifetime),
            instead of the one at ``config.checkpoint_path``.

    Raises:
        UsageError: ``config`` is not a :class:`~sea.host.config.RuntimeConfig`.
    """

    def __init__(
        self, config: RuntimeConfig, *, checkpointer: BaseCheckpointSaver[Any] | None = None
    ) -> None:
        if not isinstance(config, RuntimeConfig):
            raise UsageError(
                f"Runtime takes a RuntimeConfig, not {type(config).__name__}: "
                "Runtime(RuntimeConfig(store, models, library=...))")
        self.config = config
        """What the runtime is (frozen)."""
        self._driver = Driver(config, checkpointer)
        self._running: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Task[None]]] = {}
        self.loop_thread = LoopThread()
        """The event loop every synchronous call (``run_pulse``, ``stream_pulse``,
        ``run_resume``...) runs on, in a background thread: one loop for the runtime's life."""

    @property
    def services(self) -> Services:
        """What every node reaches: the store, the library, the compiler, the limits."""
        return self._driver.services

    @property
    def turns(self) -> PersonaTurns:
        """Whose turn it is: one pulse at a time per persona."""
        return self._driver.turns

    @property
    def keeps_checkpoints(self) -> bool:
        """The checkpoints of pulses that ended are kept (``keep_checkpoints``)."""
        return self.config.keep_checkpoints

    # -- host API -------------------------------------------------------------------------

    def astream_pulse(
        self,
        persona: Persona,
        playbook: str,
        input: str,
        *,
        pulse_id: str | None = None,
        args: Mapping[str, Any] | None = None,
        recover: bool = False,
        thread: str | None = None,
        input_uid: str | None = None,
        input_metadata: Mapping[str, Any] | None = None,
        priority: Priority = "user",
    ) -> AsyncGenerator[Event, None]:
        """Run a pulse and yield its events as they happen (the last is ``PulseEnded``).

        A host that stops reading (``aclose()`` of the iterator) cancels the pulse there
        and then. With ``recover`` (and the host's ``pulse_id``) the start may be repeated
        after a crash: a pulse whose checkpoints exist is continued from its last one, and
        its input and memory writes are stored once however often it is started.

        Args:
            persona: Whose pulse it is.
            playbook: The top-level playbook's name.
            input: What the user says (stored first, tag ``conversation``; may be empty).
            pulse_id: The pulse's id (default: a new one).
            args: The playbook's arguments beyond ``input``.
            recover: Save a checkpoint after every step, so the pulse can be continued.
            thread: One of the persona's memory threads: the pulse reads and writes it
                instead of the main one (a conversation of its own; pins, search and plans
                stay the persona's).
            input_uid: The stored user message's uid (a client's message id).
            input_metadata: The stored user message's metadata (a client's; the engine's
                trust mark is never taken from it).
            priority: ``user`` (the default), ``autonomous`` or ``scheduled``: a pulse of
                higher priority makes a running pulse of its persona of lower priority yield
                its turn at its next node (``RuntimeConfig(when_preempted=...)`` says
                whether that one then goes on or is dropped).

        Returns:
            The pulse's events, ``PulseEnded`` last.
        """
        run = Run.start(persona, playbook, input, pulse_id=pulse_id, args=args,
                        recover=recover, thread=thread, input_uid=input_uid,
                        input_metadata=input_metadata, priority=priority)
        return self._stream(run)

    async def arun_pulse(
        self,
        persona: Persona,
        playbook: str,
        input: str,
        *,
        pulse_id: str | None = None,
        args: Mapping[str, Any] | None = None,
        recover: bool = False,
        thread: str | None = None,
        input_uid: str | None = None,
        input_metadata: Mapping[str, Any] | None = None,
        observe: Observer | None = None,
        priority: Priority = "user",
    ) -> PulseResult:
        """Run a pulse to its end and return what it did (the arguments are
        :meth:`astream_pulse`'s, and ``observe``: called with each event as it happens, on
        the pulse's loop; it must not block, so a host that publishes the events queues
        them).

        Returns:
            What the pulse did; a failure is its ``error``, never raised.
        """
        run = Run.start(persona, playbook, input, pulse_id=pulse_id, args=args,
                        recover=recover, thread=thread, input_uid=input_uid,
                        input_metadata=input_metadata, priority=priority)
        return await self._collect(run, observe)

    stream_pulse = blocking_stream(astream_pulse)
    run_pulse = blocking(arun_pulse)

    def astream_resume(self, pulse_id: str, answer: Any) -> AsyncGenerator[Event, None]:
        """Answer a waiting pulse's approval request and yield the rest of its events."""
        return self._stream(Run.resumed(pulse_id, answer))

    async def arun_resume(
        self, pulse_id: str, answer: Any, *, observe: Observer | None = None
    ) -> PulseResult:
        """Answer a waiting pulse's approval request (``True``/``"approve"`` approves)
        and return what the pulse did."""
        return await self._collect(Run.resumed(pulse_id, answer), observe)

    run_resume = blocking(arun_resume)

    def astream_continue(self, pulse_id: str) -> AsyncGenerator[Event, None]:
        """Go on with an interrupted pulse from its last checkpoint, yielding its events."""
        return self._stream(Run.continued(pulse_id))

    async def arun_continue(
        self, pulse_id: str, *, observe: Observer | None = None
    ) -> PulseResult:
        """Go on with a pulse from its last checkpoint (its process died): node runs that
        finished are not run again, but for ``set`` and ``pass`` nodes of a step that had
        not ended (consecutive ones are one step, :mod:`sea.engine.compiler`), which read
        and write only the pulse's state. Only a pulse started with ``recover=True`` has a
        checkpoint after every step; any other writes one only when it waits or ends. A
        pulse that waits for an answer stays ``waiting``; one whose checkpoints show it
        ended returns its end again.

        The result ends ``error`` (code SEA300) when the checkpointer does not know the
        pulse.
        """
        return await self._collect(Run.continued(pulse_id), observe)

    run_continue = blocking(arun_continue)

    async def aforget(self, pulse_id: str) -> None:
        """Remove a pulse's checkpoints (a host that keeps them removes them once it has
        recorded how the pulse ended)."""
        await self._driver.forget(pulse_id)

    forget = blocking(aforget)

    def cancel(self, pulse_id: str) -> bool:
        """Cancel a running pulse (from any thread); False if it is not running."""
        entry = self._running.get(pulse_id)
        if entry is None:
            return False
        loop, task = entry
        loop.call_soon_threadsafe(task.cancel)
        return True

    async def aclose(self) -> None:
        """Close the running loop's checkpoint saver now, if no pulse uses it (it stays
        open a moment after a pulse for the next one; see :mod:`sea.host.checkpoints`)."""
        await self._driver.aclose()

    def close(self) -> None:
        """Close the checkpoint saver of the synchronous calls' loop and stop the loop;
        remove the temporary checkpoint file, if the runtime made one."""
        if self.loop_thread.running:
            with suppress(Exception):  # closing: a saver that fails to close is gone anyway
                self.loop_thread.portal().call(self.aclose)
        self.loop_thread.close()
        self._driver.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- driving ----------------------------------------------------------------------------

    async def _collect(self, run: Run, observe: Observer | None = None) -> PulseResult:
        # the events are kept as they come: no queue and no reader to wake for each of them
        events: list[Event] = []

        def keep(event: Event | None) -> None:
            if event is not None:
                events.append(event)
                if observe is not None:
                    observe(event)

        task = self._begin(run, keep)
        try:
            await task
        finally:
            await self._end(run, task)
        result = pulse_result(run.pulse_id, events, run.final, run.output_schema)
        if run.mode == "continue" and "spoken" in run.final:  # the earlier drives' too
            result = replace(result, spoken=list(run.final["spoken"]))
        return result

    async def _stream(self, run: Run) -> AsyncGenerator[Event, None]:
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        task = self._begin(run, queue.put_nowait)
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task
        finally:
            await self._end(run, task)

    def _begin(self, run: Run, sink: Sink) -> asyncio.Task[None]:
        """Start the pulse's drive as a task of the running loop (so it can be cancelled
        from any thread), its events going to ``sink``."""
        if run.pulse_id in self._running:
            raise UsageError(f"pulse {run.pulse_id!r} is already running")
        task = asyncio.create_task(self._driver.drive(run, sink))
        self._running[run.pulse_id] = (asyncio.get_running_loop(), task)
        return task

    async def _end(self, run: Run, task: asyncio.Task[None]) -> None:
        """The drive is over, or its reader went away: then it is cancelled."""
        self._running.pop(run.pulse_id, None)
        if not task.done():
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
