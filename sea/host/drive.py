"""One drive of a pulse, from its persona's turn to its last event.

A drive (:class:`~sea.host.runs.Run`) starts a pulse, resumes a waiting one or continues
one whose process died. The driver takes the persona's turn (:mod:`sea.host.turns`),
stores the input, makes the pulse (:class:`~sea.host.wiring.Wiring`) and runs its graph
with a checkpoint saver; whatever the drive raises becomes how it ended (``PulseEnded``).
A pulse that may not need its checkpoints runs without a LangGraph run until a node that
may pause is about to run (:mod:`sea.engine.direct`), its checkpoints held until then
(:mod:`sea.host.pulse_savers`).
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import replace
from functools import partial
from pathlib import Path
from tempfile import TemporaryDirectory
from time import perf_counter
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Durability

from saimemory.errors import MemoryStoreError
from saimemory.records import CONVERSATION_TAG, ENGINE_MEMO, Message, NewMessage
from sea.engine.calls import bind_args, can_wait, initial_state
from sea.engine.events import (
    ApprovalRequested,
    Event,
    MemoryWritten,
    PulseEnded,
    PulseStarted,
    WarningRaised,
)
from sea.engine.journal import Journals
from sea.engine.pulse import Frame, Graph, write_uid
from sea.engine.tools.workspace import Workspace
from sea.engine.waits import Handover
from sea.errors import ExecutionError, SeaError, SizeLimitExceeded, UsageError
from sea.host.calllog import CallLog
from sea.host.checkpoints import OWNER_KEY, checkpoints_at, owner_of_this_process, sweep_orphans
from sea.host.config import RuntimeConfig
from sea.host.durable_saver import DurablePulse
from sea.host.pulse_savers import FreshPulse, HeldPulse
from sea.host.result import Status
from sea.host.runs import Run, origin_of, restore_origin
from sea.host.turns import PersonaTurns, Turn
from sea.host.wiring import Wiring

Sink = Callable[[Event | None], None]


class Driver:
    """Drives pulses of one runtime: its wiring, checkpoints and personas' turns.

    Args:
        config: The runtime's configuration.
        checkpointer: A LangGraph checkpointer used as is (the host owns its lifetime);
            without one, the checkpoints live at ``config.checkpoint_path`` (default: a
            temporary SQLite file removed by :meth:`close`).
    """

    def __init__(
        self, config: RuntimeConfig, checkpointer: BaseCheckpointSaver[Any] | None = None
    ) -> None:
        self.config = config
        self.wiring = Wiring(config)
        self.services = self.wiring.services
        self.turns = PersonaTurns(config.store)
        """Whose turn it is: one pulse at a time per persona."""
        self._checkpointer = checkpointer
        self._tmp: TemporaryDirectory[str] | None = None
        path = config.checkpoint_path
        if checkpointer is None and path is None:
            self._tmp = TemporaryDirectory(prefix="sea-checkpoints-")
            path = Path(self._tmp.name) / "checkpoints.sqlite"
        self._checkpoints = None if checkpointer is not None or path is None \
            else checkpoints_at(path)
        self._owner = owner_of_this_process()
        self._swept = False

    async def forget(self, pulse_id: str) -> None:
        """Remove a pulse's checkpoints."""
        async with self._saver() as saver:
            await saver.adelete_thread(pulse_id)

    async def aclose(self) -> None:
        """Close the running loop's checkpoint saver now, if no pulse uses it."""
        if self._checkpoints is not None:
            await self._checkpoints.aclose()

    def close(self) -> None:
        """Remove the temporary checkpoint file, if the driver made one."""
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    async def drive(self, run: Run, sink: Sink) -> None:
        """Drive ``run``, its events (and ``None`` after the last) going to ``sink``."""
        started = perf_counter()
        telemetry = self.config.telemetry
        if telemetry is not None:  # the drive's spans: its root span starts now
            with suppress(Exception):  # a provider that fails leaves the pulse untraced
                run.trace = telemetry.pulse(run.pulse_id, run.mode,
                                            shapes=self.config.registry.span_shapes())
                run.traceparent = run.trace.traceparent
                sink = run.trace.watch(sink)
        log = CallLog(self.services.store)
        sink = log.watch(sink, lambda: None if run.persona is None else run.persona.id)
        status: Status = "ok"
        error: dict[str, Any] | None = None
        try:
            async with self._saver() as saver:
                try:
                    status = await self._execute(run, sink, saver)
                finally:
                    if run.ran and status != "waiting" and not self.config.keep_checkpoints:
                        await asyncio.shield(_forget(saver, run.pulse_id, sink))
        except asyncio.CancelledError:
            status = "cancelled"
        except ExecutionError as exc:
            status, error = "error", exc.to_json()
            if error["playbook"] is None:  # e.g. the top-level arguments do not bind
                error["playbook"] = run.playbook
        except SeaError as exc:
            status = "error"
            error = {"code": exc.code, "message": exc.message}
            error.update(playbook=run.playbook, node=None)
        except Exception as exc:  # a failure outside any node (e.g. the checkpointer)
            status = "error"
            error = {
                "code": ExecutionError.code,
                "message": f"{type(exc).__name__}: {exc}",
                "playbook": run.playbook,
                "node": None,
            }
        finally:
            with suppress(asyncio.CancelledError):
                await asyncio.shield(log.flush(run.pulse_id, sink))
            if status != "waiting" and run.persona is not None and run.wrote_volatile():
                with suppress(asyncio.CancelledError):
                    await asyncio.shield(self._drop_volatile(run, sink))
            sink(PulseEnded(run.pulse_id, status, perf_counter() - started, error))
            sink(None)

    async def _drop_volatile(self, run: Run, sink: Sink) -> None:
        """Delete the ended pulse's volatile messages (a node's ``"scope": "volatile"``):
        they mattered to it only. A store that refuses is warned about, not raised."""
        assert run.persona is not None
        try:
            await asyncio.to_thread(
                self.services.store.drop_volatile, run.persona.id, run.pulse_id)
        except MemoryStoreError as exc:
            sink(WarningRaised(run.pulse_id, "volatile_kept",
                               f"the pulse's volatile messages could not be deleted "
                               f"({exc.code}): {exc.message}"))

    async def _execute(self, run: Run, sink: Sink, saver: BaseCheckpointSaver[Any]) -> Status:
        if run.mode != "start":
            await self._load_origin(run, saver)
        assert run.persona is not None
        persona = run.persona.id

        def waiting() -> None:
            sink(WarningRaised(run.pulse_id, "persona_busy", f"waiting for persona "
                               f"{persona!r}: another pulse of it is running"))

        def yielded() -> None:
            sink(WarningRaised(run.pulse_id, "preempted", f"a pulse of persona {persona!r} "
                               f"of higher priority than {run.priority!r} came: this one "
                               f"yields its turn ({self.config.busy.preempted})"))

        async with self.turns.turn(persona, self.config.busy, waiting, priority=run.priority,
                                   on_yield=yielded) as turn:
            return await self._take_turn(run, sink, saver, turn)

    async def _take_turn(
        self, run: Run, sink: Sink, saver: BaseCheckpointSaver[Any], turn: Turn
    ) -> Status:
        """The pulse's drive, while it holds its persona's turn (which it may yield at
        each node to a pulse of higher priority: :meth:`Turn.safe_point`)."""
        if run.mode == "start" and run.recover and await self._checkpointed(run, saver):
            run.mode = "continue"  # it ran partly before: go on from its last checkpoint
            await self._load_origin(run, saver)
        if run.mode == "start":  # the input is kept whatever happens next
            assert run.persona is not None and run.playbook is not None
            sink(PulseStarted(run.pulse_id, run.persona.id, run.playbook, run.input))
            await self._store_input(run, sink)  # and a recoverable one's stored uids read
        elif run.recover:
            run.stored_uids = await asyncio.to_thread(self._stored_uids, run)
        assert run.playbook is not None
        pulse = self.wiring.pulse(run, sink)
        pulse.safe_point = turn.safe_point
        fresh = not run.stored_uids if run.recover else run.new_id  # nothing stored before
        if run.mode == "start" and fresh:
            run.wrote_volatile = partial(getattr, pulse, "wrote_volatile")
        playbook, compiled = pulse.playbook(run.playbook)
        run.output_schema = playbook.output_schema
        threads = () if run.thread is None else (run.thread,)
        frame = Frame(pulse, playbook, stack=(playbook.name,), threads=threads)
        payload = _payload(run, frame)
        held: HeldPulse | None = None
        if run.mode == "start":  # it has no checkpoint yet: its reads need not be asked
            if run.recover or self.config.keep_checkpoints:  # its checkpoints go to the store
                saver = FreshPulse(saver, run.pulse_id)
            else:  # they serve only a wait: held until it waits, gone if it does not
                saver = held = HeldPulse(saver, run.pulse_id)
        if run.recover:  # of its checkpoints, only those a crash needs are written
            saver = DurablePulse(saver, run.pulse_id)
            frame.pulse.journals = Journals(saver, continued=run.mode != "start")
        frame.pulse.direct_calls = held is not None  # no callee's checkpoint is ever read
        bound = compiled.graph.copy(update={"checkpointer": saver})
        if held is None:
            return await self._run_graph(run, bound, frame, payload, held, sink)
        # None of its checkpoints would be read until a node that may wait runs: until then
        # it runs without its graph, which takes over (as if it had run those nodes) there
        limit = self.services.limits.recursion_limit
        pulse = frame.pulse
        pauses = None if not can_wait(pulse, compiled.waits) else partial(can_wait, pulse)
        found = await compiled.direct.run_until(payload, replace(frame, direct=True), limit,
                                                pauses)
        if not isinstance(found, Handover):
            run.final = dict(found)
            return "ok"
        return await self._run_graph(run, bound, frame, payload, held, sink, found)

    async def _run_graph(
        self, run: Run, bound: Graph, frame: Frame, payload: Any, held: HeldPulse | None,
        sink: Sink, handover: Handover | None = None,
    ) -> Status:
        """Run (or resume, or continue) the pulse's graph with its checkpointer; after a
        ``handover``, from the node the run without it stopped before."""
        config: RunnableConfig = {
            "configurable": {"thread_id": run.pulse_id},
            "recursion_limit": self.services.limits.recursion_limit,
        }
        if not run.recover:  # no other process takes it over: its checkpoints name this one
            config["metadata"] = {OWNER_KEY: self._owner}
        if run.mode == "resume":
            interrupts = (await bound.aget_state(config)).interrupts
            pending = tuple(dict(i.value) for i in interrupts if isinstance(i.value, dict))
            _check_workspace(run.pulse_id, pending, self.wiring.workspace)  # nothing taken yet
        run.ran = held is None  # a held pulse writes to the store only when it waits
        if run.mode == "resume":
            if not interrupts:
                raise UsageError(f"pulse {run.pulse_id!r} is not waiting for an answer")
            frame.pulse.pending = pending
        # a recoverable pulse saves each step's checkpoint before the next step starts, so
        # a finished node (and its model call) is never run again after a crash; another
        # pulse's checkpoints serve only its approval waits: written when it waits or ends
        durability: Durability = "sync" if run.recover else "exit"
        if run.mode == "continue":
            final, waiting = await _go_on(bound, config, frame, durability)
        elif handover is not None and handover.last is not None:
            # its first checkpoint: the state as if the nodes that ran had run in the graph
            config["recursion_limit"] = self.services.limits.recursion_limit - handover.ran
            await bound.aupdate_state(config, handover.as_ran(), as_node=handover.last)
            final = await bound.ainvoke(None, config, context=frame, durability=durability)
            waiting = final.get("__interrupt__") or []
        else:
            final = await bound.ainvoke(payload, config, context=frame, durability=durability)
            waiting = final.get("__interrupt__") or []
        run.final = dict(final)
        if held is not None and waiting:
            run.ran = True  # what the flush wrote is removed if the pulse fails from here on
            await held.flush()
        for pending in waiting:
            request = dict(pending.value) if isinstance(pending.value, dict) else {}
            where = (str(request.get("playbook", frame.name)), str(request.get("node", "")))
            sink(ApprovalRequested(run.pulse_id, *where, request))
        return "waiting" if waiting else "ok"

    async def _checkpointed(self, run: Run, saver: BaseCheckpointSaver[Any]) -> bool:
        found = await saver.aget_tuple(
            {"configurable": {"thread_id": run.pulse_id, "checkpoint_ns": ""}}
        )
        return found is not None

    def _stored_uids(self, run: Run) -> frozenset[str]:
        assert run.persona is not None
        written = self.services.store.pulse_messages(run.persona.id, run.pulse_id)
        return frozenset(message.uid for message in written)

    async def _store_input(self, run: Run, sink: Sink) -> None:
        """Store the user's input (a recoverable pulse's under a uid of the pulse, unless an
        earlier start of it stored it); a recoverable pulse reads the uids it stored before
        in the same hop to the store's thread (:attr:`Run.stored_uids`)."""
        assert run.persona is not None
        if not run.input and not run.recover:
            return
        limit = self.services.limits.max_message_chars
        if len(run.input) > limit:
            raise SizeLimitExceeded(
                f"the user's input has {len(run.input):,} characters, more than {limit:,} "
                "(Limits.max_message_chars); nothing was stored",
                limit="max_message_chars",
            )
        uid = write_uid(run.pulse_id, "input") if run.recover else run.input_uid
        metadata = dict(run.input_metadata)
        metadata.pop(ENGINE_MEMO, None)  # the user's words are never the engine's own
        message = NewMessage(
            persona=run.persona.id,
            role="user",
            content=run.input,
            tags=(CONVERSATION_TAG,),
            metadata=metadata,
            pulse_id=run.pulse_id,
            thread=run.thread,
            uid=uid,
        )

        def write() -> Message | None:
            if run.recover:
                run.stored_uids = self._stored_uids(run)
            if not run.input or (uid is not None and uid in run.stored_uids):
                return None  # none, or stored by an earlier start of this pulse
            return self.services.store.append(message)

        stored = await asyncio.to_thread(write)
        if stored is None:
            return
        sink(
            MemoryWritten(
                run.pulse_id, None, None, stored.id, stored.role, stored.content, stored.tags,
                run.thread,
            )
        )

    async def _load_origin(self, run: Run, saver: BaseCheckpointSaver[Any]) -> None:
        found = await saver.aget_tuple(
            {"configurable": {"thread_id": run.pulse_id, "checkpoint_ns": ""}}
        )
        values = None if found is None else found.checkpoint["channel_values"]
        if values is not None and "origin" not in values:  # only its input was saved
            first = values.get("__start__")
            values = first if isinstance(first, dict) else values
        restore_origin(run, values)
        if run.trace is not None and run.persona is not None and run.playbook is not None:
            run.trace.origin(run.persona.id, run.playbook, run.traceparent)

    @asynccontextmanager
    async def _saver(self) -> AsyncIterator[BaseCheckpointSaver[Any]]:
        if self._checkpointer is not None:
            yield self._checkpointer
            return
        assert self._checkpoints is not None
        async with self._checkpoints.saver() as saver:
            if not self._swept:  # once: the checkpoints of pulses whose process is gone
                self._swept = True
                await _sweep(saver, self._owner)
            yield saver




def _check_workspace(pulse_id: str, pending: Sequence[Mapping[str, Any]],
                     workspace: Workspace | None) -> None:
    """Refuse to answer a request that records a workspace (a plan's approval: its specs
    are paths there) in a runtime without that workspace; the pulse keeps waiting.

    Raises:
        UsageError: the runtime has no workspace, or another one.
    """
    for request in pending:
        recorded = request.get("workspace")
        if not isinstance(recorded, str):
            continue
        if workspace is not None and workspace.root == Path(recorded):
            continue
        given = ("no workspace" if workspace is None
                 else f"the workspace {str(workspace.root)!r}")
        raise UsageError(
            f"pulse {pulse_id!r} waits for an answer about a plan made for the workspace "
            f"{recorded!r}, and was resumed with {given}; resume it with --workspace "
            f"{shlex.quote(recorded)} (nothing was answered: it still waits)")


async def _sweep(saver: BaseCheckpointSaver[Any], owner: str) -> None:
    host = owner.rpartition(":")[0]
    with suppress(Exception):  # housekeeping: a pulse never fails for it
        await sweep_orphans(saver, host=host)


async def _forget(saver: BaseCheckpointSaver[Any], pulse_id: str, sink: Sink) -> None:
    try:
        await saver.adelete_thread(pulse_id)
    except Exception as exc:  # cleanup only: the pulse's own outcome stands
        message = f"could not remove the pulse's checkpoints: {type(exc).__name__}: {exc}"
        sink(WarningRaised(pulse_id, "checkpoint_cleanup", message))


async def _go_on(
    bound: Graph, config: RunnableConfig, frame: Frame, durability: Durability
) -> tuple[dict[str, Any], list[Any]]:
    """Continue a pulse from its last checkpoint: the final state and what it waits for.

    A pulse that waits for an answer, or that had ended, is not run again.
    """
    state = await bound.aget_state(config)
    if state.interrupts:
        return dict(state.values), list(state.interrupts)
    if not state.next and not state.tasks:
        return dict(state.values), []  # its last checkpoint is its end
    # Either nodes are left to run, or a step's tasks finished (their writes were saved)
    # and the process died before the checkpoint after them: LangGraph then shows no
    # `next`, yet the graph has not ended. Going on applies those writes and runs the rest.
    final = await bound.ainvoke(None, config, context=frame, durability=durability)
    return dict(final), list(final.get("__interrupt__") or [])


def _payload(run: Run, frame: Frame) -> Any:
    """What the graph is invoked with: the first state of a new pulse, the answer that
    resumes a waiting one, or nothing (a continued pulse goes on from its checkpoint)."""
    if run.mode == "resume":
        return Command(resume=run.answer)
    if run.mode == "continue":
        return None
    given = {"input": run.input, **run.args}
    state = initial_state(frame, bind_args(frame.playbook, given), input=run.input)
    state["origin"] = origin_of(run)
    return state


