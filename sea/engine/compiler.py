"""Playbook → LangGraph ``StateGraph``, compiled once per content hash and reused.

Each playbook node becomes one graph node that runs its :class:`~sea.engine.registry.NodeKind`
inside a wrapper shared by all types: bounds and sizes, node events and timing, failure handling
(route to ``error_next`` with ``error`` in state, or fail the pulse naming playbook, node
and cause). Graphs capture only the playbook; everything of a pulse comes from the run
context (:class:`~sea.engine.pulse.Frame`).

A node of a pure kind (:attr:`~sea.engine.registry.NodeKind.pure`, e.g. ``set``, ``pass``: it
reads and writes only the run's state, never pauses, and running it again gives the same
update) does not end its graph step when the node after it is pure too: its graph node
runs the pure nodes that follow, one after another as a run without Pregel does
(:mod:`sea.engine.direct`), and routes to the first node that is not pure by a
``Command``. A checkpoint between two pure nodes would only
spare running them again after a crash, which costs less than the checkpoint. Every node
still runs in its own wrapper (its events, bounds and failures) and is still a graph node:
a graph resumed at a pure node goes on from it, and one taken over after a pure node is
given that node's ``Command`` (:meth:`sea.engine.waits.Handover.as_ran`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime as GraphRuntime
from langgraph.types import Command

from sea.engine.bounds import check_bounds, check_sizes
from sea.engine.calls import can_wait
from sea.engine.direct import DirectGraph, Runner, Step, WaitsNow, fold
from sea.engine.events import ErrorRaised, NodeEnded, NodeStarted
from sea.engine.pulse import Frame, Graph
from sea.engine.registry import NodeKind, Registry
from sea.engine.routing import edges_for
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import NEVER, Waits
from sea.errors import (
    BoundExceeded,
    ExecutionError,
    NodeFailed,
    PulseCancelled,
    SeaError,
    UsageError,
)
from sea.lang import exec_targets
from sea.lang.graph import loop_nodes
from sea.lang.models import Playbook
from sea.lang.node import NodeModel
from sea.llm.budget import Spent


def as_failure(exc: Exception, playbook: str, node: str) -> ExecutionError:
    """The pulse-level error for an exception raised by a node."""
    if isinstance(exc, ExecutionError) and exc.playbook and exc.node:
        return exc
    if isinstance(exc, SeaError):
        detail = exc.detail if isinstance(exc, ExecutionError) else exc.message
        failure = ExecutionError(detail, code=exc.code, playbook=playbook, node=node)
        if isinstance(exc, ExecutionError):
            failure.steps = exc.steps
            failure.values = exc.values
    else:
        failure = NodeFailed(f"{type(exc).__name__}: {exc}", playbook=playbook, node=node)
    failure.__cause__ = exc
    return failure


def error_record(failure: ExecutionError, node: str) -> dict[str, Any]:
    """The ``error`` value a failed node leaves in state."""
    return {
        "code": failure.code,
        "message": failure.detail,
        "node": node,
        "playbook": failure.playbook,
    }


@dataclass(frozen=True, slots=True)
class Compiled:
    """A playbook compiled: its LangGraph graph, the same nodes for a run without Pregel
    (:mod:`sea.engine.direct`), and where its nodes can pause for a person."""

    graph: Graph
    direct: DirectGraph
    waits: Waits
    effects: tuple[_Effect, ...] = ()
    """Its nodes that are not pure."""

    def one_step(self, replayable: Callable[[str], bool]) -> bool:
        """Whether every run of it is as one graph step would run it: nodes that may run
        again harmlessly (pure nodes, and nodes that only call a tool that ``replayable``
        says may be called again), then at most one other node, which calls no playbook
        and, whatever its outcome, ends the run (no ``next``, ``conditional_next`` or
        ``error_next``): after it, nothing of the run is left that could fail. The
        playbook may have several such nodes (a ``memory_recall`` that saves its notes, or
        that it found none): each ends the run, so a run reaches one of them at most."""
        left = [e for e in self.effects if e.tool is None or not replayable(e.tool)]
        return all(e.ends and not e.calls for e in left)

    def kept(self, replayable: Callable[[str], bool]) -> frozenset[str] | None:
        """The nodes whose runs a run of it in its caller's step keeps
        (:mod:`sea.engine.journal`): those not pure that may not run again harmlessly (not
        a write keyed by the node run, not a call of a tool that ``replayable`` says may be
        called again). None when a node of it may call a playbook: the runs of that
        playbook's nodes would not be kept, so it runs in a graph of its own."""
        if any(e.calls for e in self.effects):
            return None
        return frozenset(e.node for e in self.effects
                         if not e.keyed and (e.tool is None or not replayable(e.tool)))


class Compiler:
    """Compiles playbooks and keeps each compiled graph by content hash."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._cache: dict[str, Compiled] = {}

    def compile(self, playbook: Playbook, content_hash: str) -> Graph:
        """The graph of ``playbook`` (built on first use of this hash)."""
        return self.compiled(playbook, content_hash).graph

    def compiled(self, playbook: Playbook, content_hash: str) -> Compiled:
        """``playbook`` compiled (on first use of this hash)."""
        compiled = self._cache.get(content_hash)
        if compiled is None:
            try:
                compiled = self._build(playbook)
            except ValueError as exc:  # LangGraph's own checks, e.g. a reserved node name
                raise UsageError(f"playbook {playbook.name!r} cannot be compiled: {exc}") from exc
            self._cache[content_hash] = compiled
        return compiled

    def cached(self) -> int:
        """How many graphs are compiled and kept."""
        return len(self._cache)

    def _build(self, playbook: Playbook) -> Compiled:
        builder = StateGraph(PlaybookState, context_schema=Frame)
        loops = loop_nodes(playbook.nodes)
        steps: dict[str, Step] = {}
        waits = NEVER
        effects: list[_Effect] = []
        for node in playbook.nodes:
            kind = self.registry.get(node.type)
            if not kind.pure:
                effects.append(_Effect.of(node, kind))
            routed = node.on_error is not None
            runner = _runner(kind, node, playbook.name, routed=routed, looping=node.id in loops)
            edges = edges_for(node)
            declared = kind.waits(node)
            steps[node.id] = Step(runner, edges.static, edges.router, declared,
                                  _waits_now(kind, node), kind.pure, kind.keyed_writes)
            waits |= declared
            if steps[node.id].pure:  # its pure successors run in its step; it routes by Command
                builder.add_node(node.id, _pure_run(node.id, steps))
                continue
            builder.add_node(node.id, runner)
            if edges.router is None:
                builder.add_edge(node.id, edges.static or "__end__")
            else:
                builder.add_conditional_edges(node.id, edges.router, list(edges.targets))
        builder.add_edge(START, playbook.start_node)
        graph = builder.compile(name=playbook.name)
        direct = DirectGraph(playbook.name, playbook.start_node, steps)
        return Compiled(graph, direct, waits | _spelled_callees(playbook), tuple(effects))


@dataclass(frozen=True, slots=True)
class _Effect:
    """A node that is not pure, as :meth:`Compiled.one_step` and :meth:`Compiled.kept` see
    it."""

    node: str
    tool: str | None
    """The tool it only calls (:meth:`NodeKind.only_tool`), or None."""
    ends: bool
    """Whatever its outcome, the run ends after it."""
    calls: bool
    """It may call a playbook."""
    keyed: bool
    """Its writes are keyed by the node run (:attr:`NodeKind.keyed_writes`): in a
    recoverable pulse it may run again harmlessly."""

    @classmethod
    def of(cls, node: NodeModel, kind: NodeKind[Any]) -> _Effect:
        edges = edges_for(node)
        ends = edges.router is None and edges.static == END
        return cls(node.id, kind.only_tool(node), ends, kind.waits(node).calls_playbooks,
                   kind.keyed_writes)


def _spelled_callees(playbook: Playbook) -> Waits:
    """Where the playbooks its ``exec`` nodes may run by a name it spells can pause
    (:mod:`sea.lang.exec_targets`): a node kind sees its node, not the playbook's spellings."""
    patterns: list[str] = []
    for node in playbook.nodes:
        chosen = node.chosen_callee()
        source = getattr(node, "playbook_source", None)
        if chosen is None or chosen.allowed is not None or not isinstance(source, str):
            continue
        assignments = exec_targets.set_assignments(playbook.nodes)
        patterns.extend(p.pattern for p in exec_targets.spelled_patterns(assignments, source))
    return Waits(spelled=tuple(dict.fromkeys(patterns))) if patterns else NEVER


def _waits_now(kind: NodeKind[Any], node: NodeModel) -> WaitsNow:
    """Where ``node`` can pause about to run with a state in a frame, as its kind says."""
    return lambda state, frame: kind.waits_now(node, state, frame)


def _pure_run(start: str, steps: Mapping[str, Step]) -> Any:
    """The graph node of the pure node ``start``: it runs, then each pure node after it in
    turn (their updates folded in by the state's reducers, their edges taken by their own
    routers), then the first node that is not pure, unless it may pause for a person in
    this pulse; the step routes to the node after the last that ran, or ends. In a
    recoverable pulse a node whose writes are keyed by the node run
    (:attr:`~sea.engine.registry.NodeKind.keyed_writes`, ``memorize``) goes with the pure
    nodes: run again, it stores nothing twice.

    A step of pure nodes and one other node keeps what that node's own step keeps: after
    a crash (or a failure of that node) the step runs again from its first pure node,
    which gives the same update again, and the other node runs again as it would in its
    own step; once the step's checkpoint is written, none of them runs again. A node that
    may pause keeps a step of its own: a resumed step runs again from its start."""

    async def run(state: PlaybookState, *, runtime: GraphRuntime[Frame]) -> Command[str]:
        current = start
        update: PlaybookState = {}
        again = runtime.context.pulse.recoverable  # keyed writes may run again
        while True:
            step = steps[current]
            done = await step.runner(state, runtime=runtime)
            state, update = fold(state, done), fold(update, done)
            current = step.after(state)
            if current == END or not (step.pure or again and step.keyed_writes):
                return Command(goto=current, update=update)  # the step's other node ran
            after = steps[current]
            if not after.pure and can_wait(
                runtime.context.pulse, after.waits_at(state, runtime.context)):
                return Command(goto=current, update=update)

    run.__name__ = f"node_{start}"
    return run


@dataclass(frozen=True, slots=True)
class _Site:
    """One node as its runner sees it: where it is and how its outcome is handled."""

    playbook: str
    node: str
    node_type: str
    routed: bool
    """The node has an ``error_next``: its failure is routed, not raised."""
    looping: bool
    """The node is on a cycle: its visits are counted."""


@dataclass(frozen=True, slots=True)
class _Timing:
    """A node run between its start and end events."""

    frame: Frame
    site: _Site
    started: float

    @classmethod
    def start(cls, frame: Frame, site: _Site) -> _Timing:
        pid, depth = frame.pulse.pulse_id, frame.depth
        frame.emit(NodeStarted(pid, site.playbook, site.node, site.node_type, depth))
        return cls(frame, site, perf_counter())

    def end(self, outcome: str) -> None:
        site, frame = self.site, self.frame
        took = perf_counter() - self.started
        where = (site.playbook, site.node, site.node_type, frame.depth)
        frame.emit(NodeEnded(frame.pulse.pulse_id, *where, took, outcome))


def _runner(
    kind: NodeKind[Any], node: NodeModel, playbook: str, *, routed: bool, looping: bool
) -> Runner:
    site = _Site(playbook, node.id, node.node_type(), routed, looping)

    async def run(state: PlaybookState, *, runtime: GraphRuntime[Frame]) -> Update:
        frame = runtime.context.at_node(int(state.get("steps") or 0))
        if frame.pulse.safe_point is not None:  # it may yield to a pulse of higher priority
            await frame.pulse.safe_point()
        check_bounds(state, site.node, playbook, frame.services.limits, looping=looping)
        meter = frame.pulse.caller.meter
        before = meter.sync(state.get("spent"))  # the state's count is the durable one
        timing = _Timing.start(frame, site)
        try:
            update = await kind.run(node, state, frame)
            check_sizes(state, update, frame.services.limits, playbook=playbook, node=site.node)
        except (GraphBubbleUp, BoundExceeded, PulseCancelled):
            raise
        except Exception as exc:
            return _spent(_failed(exc, state, timing), meter.since(before))
        timing.end("ok")
        counted: Update = _spent(
            {**update, "steps": 1 + int(update.get("steps", 0))}, meter.since(before)
        )
        if looping:
            counted["visits"] = {site.node: 1}
        if routed:
            counted["fault"] = None
        return counted

    run.__name__ = f"node_{site.node}"
    return run


def _spent(update: Update, spent: Spent) -> Update:
    """``update`` with what the node's model calls spent (those of a called playbook's
    nodes included), for the state's ``spent`` channel."""
    if not spent.is_zero():
        update["spent"] = spent.to_state()
    return update


def _failed(exc: Exception, state: PlaybookState, timing: _Timing) -> Update:
    """Route a node's failure to its ``error_next``, or raise it to fail the pulse.

    A routed failure counts every node run it stands for: this node, and when this node
    called a playbook, the nodes the callee ran before it failed.
    """
    site, frame = timing.site, timing.frame
    failure = as_failure(exc, site.playbook, site.node)
    before = int(state.get("steps") or 0)
    failure.steps = max(failure.steps or 0, before + 1)
    record = error_record(failure, site.node)
    frame.emit(ErrorRaised(frame.pulse.pulse_id, site.playbook, site.node, record, site.routed))
    if not site.routed:
        timing.end("failed")
        if failure is exc:
            raise failure
        raise failure from exc
    timing.end("error")
    failed: Update = {"error": record, "fault": site.node, "steps": failure.steps - before}
    if failure.values:
        failed["vars"] = dict(failure.values)
    if site.looping:
        failed["visits"] = {site.node: 1}
    return failed
