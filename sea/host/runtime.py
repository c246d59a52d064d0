"""The host API: run, stream, cancel, resume and continue pulses.

A pulse is one run of a top-level playbook for one persona. The runtime stores the user's
input first (tag ``conversation``), whatever the pulse does later, then runs the compiled
graph with a LangGraph checkpointer (thread id = pulse id), so a pulse that waits for an
approval can be resumed later by another process (:meth:`Runtime.aresume`). A pulse started
with ``recover=True`` saves a checkpoint after every step, so when its process dies it can be
continued from the last one (:meth:`Runtime.acontinue`, or the same start again); any other
pulse writes its checkpoint only when it waits or ends (LangGraph's ``exit`` durability),
which spares it a database write per step: a killed one is simply gone, as if never begun,
except for its input and what it had stored. Such a pulse needs no checkpoint until a node
that may pause for a person (:mod:`sea.engine.waits`) is about to run: until then it runs
without a LangGraph run (:mod:`sea.engine.direct`), and there its graph takes over, its first
checkpoint holding the state as if the nodes that ran had run in it (a pulse that reaches
no such node makes no checkpoint at all); each called playbook that cannot pause runs
without a LangGraph run too. An ``exec`` node may pause where the playbook it is about to
run can, not where any playbook of its list could.

A pulse drives only while it holds its persona's turn (:mod:`sea.host.turns`): one pulse
at a time per persona, in this runtime and in every process on the same store; the host
chooses whether a pulse waits for the turn or fails with :class:`sea.errors.PersonaBusy`.

Cancellation (:meth:`Runtime.cancel`) cancels the pulse's task: it is never routed to an
``error_next`` and never swallowed by a sub-playbook call, and a partly streamed reply is
**not stored** (the tokens already sent stay sent; memory gets nothing of that reply).
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager, suppress
from dataclasses import replace
from functools import partial
from pathlib import Path
from tempfile import TemporaryDirectory
from time import perf_counter
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Durability

from saimemory.base import DEFAULT_BUDGET, MessageStore
from saimemory.records import CONVERSATION_TAG, ENGINE_MEMO, HistoryBudget, NewMessage, Persona
from sea.engine.calls import bind_args, can_wait, initial_state
from sea.engine.compiler import Compiler
from sea.engine.events import (
    ApprovalRequested,
    Event,
    LLMCalled,
    MemoryWritten,
    PulseEnded,
    PulseStarted,
    WarningRaised,
)
from sea.engine.gates import ToolGate
from sea.engine.limits import Limits
from sea.engine.plans.policy import PlanPolicy
from sea.engine.plans.tools import PlanToolkit, plan_changed
from sea.engine.pulse import Frame, Graph, Library, Pulse, RouterOffer, Services, write_uid
from sea.engine.registry import Registry
from sea.engine.tools.box import ToolBox, signatures
from sea.engine.tools.builtin import builtin_tool_makers
from sea.engine.tools.model_signatures import MODEL_TOOL_ARGUMENTS
from sea.engine.tools.model_tools import model_tool_makers
from sea.engine.tools.signatures import ARGUMENTS, PLAN_ARGUMENTS
from sea.engine.tools.workspace import Workspace, workspace_tools
from sea.engine.waits import Handover
from sea.errors import ExecutionError, SeaError, SizeLimitExceeded, UsageError
from sea.host.blocking import LoopThread, blocking, blocking_stream
from sea.host.calllog import CallLog
from sea.host.checkpoints import (
    OWNER_KEY,
    checkpoints_at,
    owner_of_this_process,
    sweep_orphans,
)
from sea.host.pulse_savers import FreshPulse, HeldPulse
from sea.host.result import PulseResult, Status, pulse_result
from sea.host.runs import Run, origin_of, restore_origin
from sea.host.turns import BusyPolicy, PersonaTurns, WhenBusy
from sea.lang.library import PlaybookLibrary
from sea.llm.call import LLMCaller
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions
from sea.llm.records import LLMCallRecord
from sea.nodes import builtin_registry

__all__ = ["BusyPolicy", "PulseResult", "Runtime", "Status"]

Sink = Callable[[Event | None], None]
Observer = Callable[[Event], None]
"""Called with each event of a pulse run to its end (``arun_pulse(..., observe=)``)."""


class Runtime:
    """Runs playbooks as pulses for personas.

    Args:
        store: The persona message store (SAIMemory).
        models: The normal and lightweight chat models.
        tools: The host's tools (the built-in ones are added unless a host tool has the name).
        library: Where playbooks are found by name: a library, or the playbook
            directories (searched in order, then the bundled playbooks).
        checkpointer: A LangGraph checkpointer used as is (the host owns its lifetime).
        checkpoint_path: Without ``checkpointer``: where the checkpoints live, a SQLite file
            or a ``postgresql://`` DSN (``?schema=NAME`` allowed; needs the postgres
            extra). Waiting pulses can be resumed from it by another process; pulses
            running together share one connection to it. Default: a temporary SQLite file
            that lives as long as this runtime.
        limits: Bounds and approval policy.
        registry: Node types (default: the built-in ones, :func:`sea.nodes.builtin_registry`).
            Playbooks found in directories may use every type it holds; a ``Library`` given
            as an object should be built with ``types=registry.node_types()``.
        max_retries: Retries of a rejected structured answer.
        history_budget: How much earlier conversation an LLM context may hold.
        keep_checkpoints: Keep the checkpoints of pulses that ended (ok, error, cancelled).
            By default only waiting pulses keep theirs, so the file does not grow forever.
        workspace: A directory the built-in workspace tools (``list_files``, ``read_file``,
            ``search_files``) may read, and nothing outside it, and the plan tools may change
            once a person approves; without one they are absent.
        when_busy: What a pulse does while another pulse of its persona runs (in this
            runtime, or in any process on the same store): ``"wait"`` for its turn (the
            default) or ``"fail"`` at once with :class:`sea.errors.PersonaBusy`.
        busy_timeout: The longest wait for a turn, in seconds; then ``PersonaBusy``.
        plan_policy: What plans may do in the workspace (``run`` allow-list, size limits,
            automatic approval up to a risk): with a workspace, pulses also have the plan
            tools (:mod:`sea.engine.plans.tools`).
        llm: How model calls are made beyond which models: prices, rate-limit backoff,
            safety rules, short-term memory, guidelines, the intent threshold
            (:class:`sea.llm.options.LLMOptions`). Every pulse's calls are stored in
            SAIMemory (``sea stats`` reads them).
        gates: Tool name → gate (:mod:`sea.engine.gates`) for the host's own tools whose
            results wait for a person (a replay's, :mod:`sea.trace.replay`).
    """

    def __init__(
        self,
        store: MessageStore,
        models: ModelSet,
        *,
        tools: Sequence[BaseTool] = (),
        library: Library | str | Path | Sequence[str | Path],
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        checkpoint_path: str | Path | None = None,
        limits: Limits | None = None,
        registry: Registry | None = None,
        max_retries: int = 2,
        history_budget: HistoryBudget = DEFAULT_BUDGET,
        keep_checkpoints: bool = False,
        workspace: str | Path | None = None,
        when_busy: WhenBusy = "wait",
        busy_timeout: float = 300.0,
        plan_policy: PlanPolicy | None = None,
        llm: LLMOptions | None = None,
        gates: Mapping[str, ToolGate] | None = None,
    ) -> None:
        self._llm = llm or LLMOptions()
        self._gates = dict(gates or {})
        self._busy = BusyPolicy(when_busy, busy_timeout)
        registry = registry or builtin_registry()
        self._workspace_tools = () if workspace is None else tuple(workspace_tools(Path(workspace)))
        self._workspace = None if workspace is None else Workspace(Path(workspace))
        self._plan_policy = plan_policy or PlanPolicy()
        self._signatures = signatures([*tools, *self._workspace_tools])
        """The argument schemas and validators of the runtime's tools, worked out once: the
        host's when it starts, the built-in ones (made anew for each pulse's persona from the
        same argument models) by the first pulse that calls them."""
        playbooks = _library(library, registry)
        self.services = Services(store, playbooks, Compiler(registry), limits or Limits())
        self._models = models
        self._tools = tuple(tools)
        self._max_retries = max_retries
        self._budget = history_budget
        self._checkpointer = checkpointer
        self._keep_checkpoints = keep_checkpoints
        self._tmp: TemporaryDirectory[str] | None = None
        if checkpointer is None and checkpoint_path is None:
            self._tmp = TemporaryDirectory(prefix="sea-checkpoints-")
            checkpoint_path = Path(self._tmp.name) / "checkpoints.sqlite"
        self._checkpoints = None if checkpoint_path is None else checkpoints_at(checkpoint_path)
        self._owner = owner_of_this_process()
        self._swept = False
        self._running: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Task[None]]] = {}
        self.turns = PersonaTurns(store)
        """Whose turn it is: one pulse at a time per persona."""
        self.loop_thread = LoopThread()
        """The event loop every synchronous call (``run_pulse``, ``stream_pulse``, ``resume``)
        runs on, in a background thread: one loop for the runtime's life."""

    @property
    def keeps_checkpoints(self) -> bool:
        """The checkpoints of pulses that ended are kept (``keep_checkpoints``)."""
        return self._keep_checkpoints

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
    ) -> AsyncGenerator[Event, None]:
        """Run a pulse and yield its events as they happen (the last is ``PulseEnded``).

        A host that stops reading (``aclose()`` of the iterator) cancels the pulse there
        and then. With ``recover`` (and the host's ``pulse_id``) the start may be repeated
        after a crash: a pulse whose checkpoints exist is continued from its last one, and
        its input and memory writes are stored once however often it is started.

        With ``thread`` (one of the persona's memory threads) the pulse reads and writes
        that thread instead of the main one (a conversation of its own; pins, search,
        plans stay the persona's). ``input_uid`` and ``input_metadata`` go on the stored
        user message (a client's message id and metadata; the engine's trust mark is never
        taken from them).
        """
        return self._stream(Run.start(persona, playbook, input, pulse_id, args, recover,
                                      thread=thread, input_uid=input_uid,
                                      input_metadata=input_metadata))

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
    ) -> PulseResult:
        """Run a pulse to its end and return what it did (``recover``, ``thread``,
        ``input_uid``, ``input_metadata``: see :meth:`astream_pulse`). ``observe`` is
        called with each event as it happens, on the pulse's loop (it must not block: a
        host that publishes the events queues them)."""
        run = Run.start(persona, playbook, input, pulse_id, args, recover, thread=thread,
                        input_uid=input_uid, input_metadata=input_metadata)
        return await self._collect(run, observe)

    stream_pulse = blocking_stream(astream_pulse)
    run_pulse = blocking(arun_pulse)

    def astream_resume(self, pulse_id: str, answer: Any) -> AsyncGenerator[Event, None]:
        """Answer a waiting pulse's approval request and yield the rest of its events."""
        return self._stream(Run.resumed(pulse_id, answer))

    async def aresume(self, pulse_id: str, answer: Any, *,
                      observe: Observer | None = None) -> PulseResult:
        """Answer a waiting pulse's approval request (``True``/``"approve"`` approves);
        ``observe``: see :meth:`arun_pulse`."""
        return await self._collect(Run.resumed(pulse_id, answer), observe)

    resume = blocking(aresume)

    def astream_continue(self, pulse_id: str) -> AsyncGenerator[Event, None]:
        """Go on with an interrupted pulse from its last checkpoint, yielding its events."""
        return self._stream(Run.continued(pulse_id))

    async def acontinue(self, pulse_id: str, *, observe: Observer | None = None) -> PulseResult:
        """Go on with a pulse from its last checkpoint (its process died): node runs that
        finished are not run again, but for ``set`` and ``pass`` nodes of a step that had
        not ended (consecutive ones are one step, :mod:`sea.engine.compiler`), which read
        and write only the pulse's state. Only a pulse started with ``recover=True`` has a
        checkpoint after every step; any other writes one only when it waits or ends. A
        pulse that waits for an answer stays ``waiting``; one whose checkpoints show it
        ended returns its end again.

        The result ends ``error`` (code SEA300) when the checkpointer does not know the
        pulse. ``observe``: see :meth:`arun_pulse`.
        """
        return await self._collect(Run.continued(pulse_id), observe)

    continue_pulse = blocking(acontinue)

    async def aforget(self, pulse_id: str) -> None:
        """Remove a pulse's checkpoints (a host that keeps them removes them once it has
        recorded how the pulse ended)."""
        async with self._saver() as saver:
            await saver.adelete_thread(pulse_id)

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
        if self._checkpoints is not None:
            await self._checkpoints.aclose()

    def close(self) -> None:
        """Close the checkpoint saver of the synchronous calls' loop and stop the loop;
        remove the temporary checkpoint file, if the runtime made one."""
        if self.loop_thread.running:
            with suppress(Exception):  # closing: a saver that fails to close is gone anyway
                self.loop_thread.portal().call(self.aclose)
        self.loop_thread.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

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
        task = asyncio.create_task(self._drive(run, sink))
        self._running[run.pulse_id] = (asyncio.get_running_loop(), task)
        return task

    async def _end(self, run: Run, task: asyncio.Task[None]) -> None:
        """The drive is over, or its reader went away: then it is cancelled."""
        self._running.pop(run.pulse_id, None)
        if not task.done():
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

    async def _drive(self, run: Run, sink: Sink) -> None:
        started = perf_counter()
        log = CallLog(self.services.store)
        sink = log.watch(sink, lambda: None if run.persona is None else run.persona.id)
        status: Status = "ok"
        error: dict[str, Any] | None = None
        try:
            async with self._saver() as saver:
                try:
                    status = await self._execute(run, sink, saver)
                finally:
                    if run.ran and status != "waiting" and not self._keep_checkpoints:
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
            sink(PulseEnded(run.pulse_id, status, perf_counter() - started, error))
            sink(None)

    async def _execute(self, run: Run, sink: Sink, saver: BaseCheckpointSaver[Any]) -> Status:
        if run.mode != "start":
            await self._load_origin(run, saver)
        assert run.persona is not None
        persona = run.persona.id

        def waiting() -> None:
            sink(WarningRaised(run.pulse_id, "persona_busy", f"waiting for persona "
                               f"{persona!r}: another pulse of it is running"))

        async with self.turns.turn(persona, self._busy, waiting):
            return await self._take_turn(run, sink, saver)

    async def _take_turn(self, run: Run, sink: Sink, saver: BaseCheckpointSaver[Any]) -> Status:
        """The pulse's drive, while it holds its persona's turn."""
        if run.mode == "start" and run.recover and await self._checkpointed(run, saver):
            run.mode = "continue"  # it ran partly before: go on from its last checkpoint
            await self._load_origin(run, saver)
        if run.recover:
            run.stored_uids = await asyncio.to_thread(self._stored_uids, run)
        if run.mode == "start":  # the input is kept whatever happens next
            assert run.persona is not None and run.playbook is not None
            sink(PulseStarted(run.pulse_id, run.persona.id, run.playbook, run.input))
            await self._store_input(run, sink)
        assert run.playbook is not None
        pulse = self._pulse(run, sink)
        playbook, compiled = pulse.playbook(run.playbook)
        run.output_schema = playbook.output_schema
        threads = () if run.thread is None else (run.thread,)
        frame = Frame(pulse, playbook, stack=(playbook.name,), threads=threads)
        payload = _payload(run, frame)
        held: HeldPulse | None = None
        if run.mode == "start":  # it has no checkpoint yet: its reads need not be asked
            if run.recover or self._keep_checkpoints:  # its checkpoints go to the store
                saver = FreshPulse(saver, run.pulse_id)
            else:  # they serve only a wait: held until it waits, gone if it does not
                saver = held = HeldPulse(saver, run.pulse_id)
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
            _check_workspace(run.pulse_id, pending, self._workspace)  # nothing taken yet
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
        assert run.persona is not None
        if not run.input:
            return
        limit = self.services.limits.max_message_chars
        if len(run.input) > limit:
            raise SizeLimitExceeded(
                f"the user's input has {len(run.input):,} characters, more than {limit:,} "
                "(Limits.max_message_chars); nothing was stored",
                limit="max_message_chars",
            )
        uid = write_uid(run.pulse_id, "input") if run.recover else run.input_uid
        if uid is not None and uid in run.stored_uids:
            return  # stored by an earlier start of this pulse
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
        stored = await asyncio.to_thread(self.services.store.append, message)
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

    def _pulse(self, run: Run, sink: Sink) -> Pulse:
        assert run.persona is not None
        store, library = self.services.store, self.services.library
        caller = LLMCaller(
            self._models,
            store,
            max_retries=self._max_retries,
            history_budget=self._budget,
            on_record=lambda record: _report_call(run.pulse_id, record, sink),
            max_answer_chars=self.services.limits.max_answer_chars,
            options=self._llm,
            budget=self.services.limits.budget,
        )
        host = {tool.name for tool in self._tools}
        names = host | set(ARGUMENTS) | {tool.name for tool in self._workspace_tools}
        names |= set(MODEL_TOOL_ARGUMENTS)
        plans = self._plans(run, sink)
        if plans is not None:
            names |= set(PLAN_ARGUMENTS)
        offer = RouterOffer(library, frozenset(names))  # the toolbox's names
        makers = builtin_tool_makers(store=store, persona_id=run.persona.id, library=offer)
        makers.update(model_tool_makers(store=store, persona=run.persona, caller=caller,
                                        intent=self._llm.intent))
        makers.update(plans.tool_makers() if plans is not None else {})
        made_now = [t for t in self._workspace_tools if t.name not in host]
        toolbox = ToolBox([*self._tools, *made_now], known=self._signatures,
                          makers={name: make for name, make in makers.items()
                                  if name not in host})
        asks = self.services.limits.approval_tools | run.approval_tools
        run.approval_tools = asks
        gates = {} if plans is None else {
            name: gate for name, gate in plans.gates().items() if name not in host}
        gates.update(self._gates)
        return Pulse(
            self.services, run.persona, run.pulse_id, sink, caller, toolbox, offer, asks,
            recoverable=run.recover, stored_uids=run.stored_uids, gates=gates,
        )

    def _plans(self, run: Run, sink: Sink) -> PlanToolkit | None:
        """The plan tools of the pulse's persona, when the host gave a workspace; their
        events go to the pulse's events."""
        if self._workspace is None:
            return None
        assert run.persona is not None
        return PlanToolkit(
            self.services.store, run.persona.id, self._workspace, self._plan_policy,
            on_event=lambda event, playbook, node: sink(
                plan_changed(run.pulse_id, event, playbook, node)),
        )

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


def _report_call(pulse_id: str, record: LLMCallRecord, sink: Sink) -> None:
    sink(LLMCalled(pulse_id, record))
    for text in record.warnings:
        sink(WarningRaised(pulse_id, "llm_call", text, record.playbook, record.node))


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


def _library(given: Library | str | Path | Sequence[str | Path], registry: Registry) -> Library:
    """The library a runtime reads: the one given, or one of the given directories."""
    if isinstance(given, str | Path):
        given = [given]
    if not isinstance(given, Sequence):
        return given
    dirs = [Path(d) for d in given]
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        raise UsageError(f"playbook directory not found: {', '.join(missing)}")
    return PlaybookLibrary.bundled(dirs, types=registry.node_types())
