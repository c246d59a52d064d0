"""The host API: run, stream, cancel and resume pulses.

A pulse is one run of a top-level playbook for one persona. The runtime stores the user's
input first (tag ``conversation``), whatever the pulse does later, then runs the compiled
graph with a LangGraph checkpointer (thread id = pulse id), so a pulse that waits for an
approval can be resumed later by another process (:meth:`Runtime.aresume`).

Cancellation (:meth:`Runtime.cancel`) cancels the pulse's task: it is never routed to an
``error_next`` and never swallowed by a sub-playbook call, and a partly streamed reply is
**not stored** (the tokens already sent stay sent; memory gets nothing of that reply).
"""

from __future__ import annotations

import asyncio
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from tempfile import TemporaryDirectory
from time import perf_counter
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from saimemory.base import DEFAULT_BUDGET, MessageStore
from saimemory.records import CONVERSATION_TAG, HistoryBudget, NewMessage, Persona
from sea.engine.calls import bind_args, initial_state
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
from sea.engine.limits import Limits
from sea.engine.pulse import Frame, Graph, Library, Pulse, Services, reachable
from sea.engine.registry import Registry
from sea.engine.tools.box import ToolBox
from sea.engine.tools.builtin import builtin_tools
from sea.engine.tools.signatures import ARGUMENTS
from sea.engine.tools.workspace import workspace_tools
from sea.errors import ExecutionError, SeaError, UsageError
from sea.host.blocking import LoopThread, blocking, blocking_stream
from sea.host.checkpoints import checkpoints_at
from sea.host.result import PulseResult, Status, pulse_result
from sea.host.runs import Run, origin_of, restore_origin
from sea.lang.library import PlaybookLibrary
from sea.lang.models import Playbook
from sea.llm.call import LLMCaller
from sea.llm.models import ModelSet
from sea.llm.records import LLMCallRecord
from sea.nodes import builtin_registry

__all__ = ["PulseResult", "Runtime", "Status"]

Sink = Callable[[Event | None], None]


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
            ``search_files``) may read, and nothing outside it; without one they are absent.
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
    ) -> None:
        registry = registry or builtin_registry()
        self._workspace_tools = () if workspace is None else tuple(workspace_tools(Path(workspace)))
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
        self._running: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Task[None]]] = {}
        self.loop_thread = LoopThread()
        """The event loop every synchronous call (``run_pulse``, ``stream_pulse``, ``resume``)
        runs on, in a background thread: one loop for the runtime's life."""

    # -- host API -------------------------------------------------------------------------

    def astream_pulse(
        self,
        persona: Persona,
        playbook: str,
        input: str,
        *,
        pulse_id: str | None = None,
        args: Mapping[str, Any] | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run a pulse and yield its events as they happen (the last is ``PulseEnded``).

        A host that stops reading (``aclose()`` of the iterator) cancels the pulse there
        and then.
        """
        return self._stream(Run.start(persona, playbook, input, pulse_id, args))

    async def arun_pulse(
        self,
        persona: Persona,
        playbook: str,
        input: str,
        *,
        pulse_id: str | None = None,
        args: Mapping[str, Any] | None = None,
    ) -> PulseResult:
        """Run a pulse to its end and return what it did."""
        run = Run.start(persona, playbook, input, pulse_id, args)
        return await self._collect(run)

    stream_pulse = blocking_stream(astream_pulse)
    run_pulse = blocking(arun_pulse)

    def astream_resume(self, pulse_id: str, answer: Any) -> AsyncGenerator[Event, None]:
        """Answer a waiting pulse's approval request and yield the rest of its events."""
        return self._stream(Run.resumed(pulse_id, answer))

    async def aresume(self, pulse_id: str, answer: Any) -> PulseResult:
        """Answer a waiting pulse's approval request (``True``/``"approve"`` approves)."""
        return await self._collect(Run.resumed(pulse_id, answer))

    resume = blocking(aresume)

    def cancel(self, pulse_id: str) -> bool:
        """Cancel a running pulse (from any thread); False if it is not running."""
        entry = self._running.get(pulse_id)
        if entry is None:
            return False
        loop, task = entry
        loop.call_soon_threadsafe(task.cancel)
        return True

    def close(self) -> None:
        """Stop the synchronous calls' loop; remove the temporary checkpoint file, if the
        runtime made one."""
        self.loop_thread.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- driving ----------------------------------------------------------------------------

    async def _collect(self, run: Run) -> PulseResult:
        events = [event async for event in self._stream(run)]
        return pulse_result(run.pulse_id, events, run.final, run.output_schema)

    async def _stream(self, run: Run) -> AsyncGenerator[Event, None]:
        if run.pulse_id in self._running:
            raise UsageError(f"pulse {run.pulse_id!r} is already running")
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        task = asyncio.create_task(self._drive(run, queue.put_nowait))
        self._running[run.pulse_id] = (asyncio.get_running_loop(), task)
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task
        finally:
            self._running.pop(run.pulse_id, None)
            if not task.done():
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task

    async def _drive(self, run: Run, sink: Sink) -> None:
        started = perf_counter()
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
            sink(PulseEnded(run.pulse_id, status, perf_counter() - started, error))
            sink(None)

    async def _execute(self, run: Run, sink: Sink, saver: BaseCheckpointSaver[Any]) -> Status:
        if run.resume:
            await self._load_origin(run, saver)
        else:  # the input is kept whatever happens next, even if the playbook is invalid
            assert run.persona is not None and run.playbook is not None
            sink(PulseStarted(run.pulse_id, run.persona.id, run.playbook, run.input))
            await self._store_input(run, sink)
        assert run.playbook is not None
        library = self.services.library
        playbook = library.get(run.playbook)
        run.output_schema = playbook.output_schema
        graph: Graph = self.services.compiler.compile(playbook, library.content_hash(playbook.name))
        frame = Frame(self._pulse(run, sink), playbook, stack=(playbook.name,))
        payload = _payload(run, frame)
        config: RunnableConfig = {
            "configurable": {"thread_id": run.pulse_id},
            "recursion_limit": self.services.limits.recursion_limit,
        }
        bound = graph.copy(update={"checkpointer": saver})
        run.ran = True
        if run.resume:
            interrupts = (await bound.aget_state(config)).interrupts
            if not interrupts:
                raise UsageError(f"pulse {run.pulse_id!r} is not waiting for an answer")
            frame.pulse.pending = tuple(
                dict(i.value) for i in interrupts if isinstance(i.value, dict)
            )
        final = await bound.ainvoke(payload, config, context=frame)
        run.final = dict(final)
        waiting = final.get("__interrupt__") or []
        for pending in waiting:
            request = dict(pending.value) if isinstance(pending.value, dict) else {}
            where = (str(request.get("playbook", playbook.name)), str(request.get("node", "")))
            sink(ApprovalRequested(run.pulse_id, *where, request))
        return "waiting" if waiting else "ok"

    async def _store_input(self, run: Run, sink: Sink) -> None:
        assert run.persona is not None
        if not run.input:
            return
        message = NewMessage(
            persona=run.persona.id,
            role="user",
            content=run.input,
            tags=(CONVERSATION_TAG,),
            pulse_id=run.pulse_id,
        )
        stored = await asyncio.to_thread(self.services.store.append, message)
        sink(
            MemoryWritten(
                run.pulse_id, None, None, stored.id, stored.role, stored.content, stored.tags
            )
        )

    async def _load_origin(self, run: Run, saver: BaseCheckpointSaver[Any]) -> None:
        found = await saver.aget_tuple(
            {"configurable": {"thread_id": run.pulse_id, "checkpoint_ns": ""}}
        )
        values = None if found is None else found.checkpoint["channel_values"]
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
        )
        host = {tool.name for tool in self._tools}
        names = host | set(ARGUMENTS) | {tool.name for tool in self._workspace_tools}
        catalog = _Reachable(library, frozenset(names))
        builtin = builtin_tools(store=store, persona_id=run.persona.id, library=catalog)
        builtin.extend(self._workspace_tools)
        toolbox = ToolBox([*self._tools, *(t for t in builtin if t.name not in host)])
        asks = self.services.limits.approval_tools | run.approval_tools
        run.approval_tools = asks
        return Pulse(self.services, run.persona, run.pulse_id, sink, caller, toolbox, asks)

    @asynccontextmanager
    async def _saver(self) -> AsyncIterator[BaseCheckpointSaver[Any]]:
        if self._checkpointer is not None:
            yield self._checkpointer
            return
        assert self._checkpoints is not None
        async with self._checkpoints.saver() as saver:
            yield saver


class _Reachable:
    """The router-callable playbooks whose tools a pulse has (``list_available_playbooks``
    offers these, as :meth:`sea.engine.pulse.Pulse.router_callable` does)."""

    def __init__(self, library: Library, tools: frozenset[str]) -> None:
        self._library = library
        self._tools = tools

    def router_callable(self) -> list[Playbook]:
        return reachable(self._library.router_callable(), self._tools)


async def _forget(saver: BaseCheckpointSaver[Any], pulse_id: str, sink: Sink) -> None:
    try:
        await saver.adelete_thread(pulse_id)
    except Exception as exc:  # cleanup only: the pulse's own outcome stands
        message = f"could not remove the pulse's checkpoints: {type(exc).__name__}: {exc}"
        sink(WarningRaised(pulse_id, "checkpoint_cleanup", message))


def _report_call(pulse_id: str, record: LLMCallRecord, sink: Sink) -> None:
    sink(LLMCalled(pulse_id, record))
    for text in record.warnings:
        sink(WarningRaised(pulse_id, "llm_call", text, record.playbook, record.node))


def _payload(run: Run, frame: Frame) -> Any:
    """What the graph is invoked with: the first state of a new pulse, or the answer."""
    if run.resume:
        return Command(resume=run.answer)
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
