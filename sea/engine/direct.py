"""A playbook run without a LangGraph run of its own, while it cannot pause for a person.

A LangGraph run costs about a millisecond of setup (channels, configs, callbacks, a
checkpoint at its end), more than most nodes. What it buys a playbook is checkpoints, read
only when the playbook pauses for a person (its resume goes on from there) or when a
recoverable pulse is driven again after a crash (each step is kept). In a pulse that
keeps no checkpoints but for a wait, a called playbook that cannot pause
(:mod:`sea.engine.waits`) is therefore run here instead, and so is the pulse's own playbook
until a node that may pause is about to run (:meth:`DirectGraph.run_until`; its graph
takes over there): the same node runners the compiled graph holds, in order, each update
folded in by the state's own reducers, each edge taken by the same router. Nodes, events,
bounds, failures and results are the same; only the checkpoints are not made. In a
recoverable pulse a called playbook that cannot pause runs here too, in its caller's step,
keeping the runs of its nodes that may not run again in that step's writes
(:mod:`sea.engine.journal`) where its own checkpoints would have kept them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, get_args, get_type_hints

from langgraph.errors import GraphRecursionError
from langgraph.graph import END
from langgraph.runtime import Runtime as GraphRuntime

from sea.engine.pulse import Frame
from sea.engine.routing import Router
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import Handover, Waits

if TYPE_CHECKING:
    from sea.engine.journal import Journal


class Runner(Protocol):
    """One graph node: a playbook node's kind wrapped in bounds, events and failure handling."""

    async def __call__(self, state: PlaybookState, *, runtime: GraphRuntime[Frame]) -> Update:
        """Run the node in the pulse whose frame is ``runtime.context``."""
        ...


_MISSING = object()


@dataclass(frozen=True, slots=True)
class _Channel:
    reducer: Callable[[Any, Any], Any]
    empty: Callable[[], Any] | None
    """The channel's value before its first write (LangGraph's: the type's own empty
    value, when the type makes one), or None: the first write is taken as it is."""


def _channels() -> dict[str, _Channel]:
    """Each channel of :class:`PlaybookState` with its reducer, as LangGraph reads them."""
    channels: dict[str, _Channel] = {}
    for name, hint in get_type_hints(PlaybookState, include_extras=True).items():
        typ, reducer = get_args(hint)[:2]
        origin = getattr(typ, "__origin__", typ)
        empty: Callable[[], Any] | None = origin if origin in (dict, list, int) else None
        channels[name] = _Channel(reducer, empty)
    return channels


CHANNELS = _channels()


def fold(state: Mapping[str, Any], update: Mapping[str, Any]) -> PlaybookState:
    """``state`` with ``update`` folded in by each channel's reducer (a new mapping)."""
    folded: dict[str, Any] = dict(state)
    for name, value in update.items():
        channel = CHANNELS[name]
        old = folded.get(name, _MISSING)
        if old is _MISSING:
            if channel.empty is None:
                folded[name] = value
                continue
            old = channel.empty()
        folded[name] = channel.reducer(old, value)
    return folded  # type: ignore[return-value]


WaitsNow = Callable[[PlaybookState, Frame], Waits | None]
"""Where a node can pause given the state it is about to run with (its kind's
:meth:`~sea.engine.registry.NodeKind.waits_now`: an ``exec`` node's callee is known only
then), or None: what its ``waits`` says."""


@dataclass(frozen=True, slots=True)
class Step:
    """One node: its runner, where it leads (a fixed target, or a router), where it can
    pause for a person (before it runs, when its kind can tell from the state), and whether
    its kind is pure (in a graph it routes by a ``Command``, :mod:`sea.engine.compiler`)."""

    runner: Runner
    static: str | None
    router: Router | None
    waits: Waits
    waits_now: WaitsNow
    pure: bool = False
    keyed_writes: bool = False
    """Its kind's :attr:`~sea.engine.registry.NodeKind.keyed_writes`: in a recoverable
    pulse it may run again harmlessly, as a pure node may."""

    def waits_at(self, state: PlaybookState, frame: Frame) -> Waits:
        """Where this node can pause when it runs with ``state``."""
        now = self.waits_now(state, frame)
        return self.waits if now is None else now

    def after(self, state: PlaybookState) -> str:
        """The node that runs next, given the state this node left (END: none)."""
        return (self.static if self.router is None else self.router(state)) or END


@dataclass(frozen=True, slots=True)
class DirectGraph:
    """A compiled playbook's nodes and edges, run one after another without Pregel."""

    name: str
    start: str
    steps: Mapping[str, Step]

    async def run(self, first: PlaybookState, frame: Frame, recursion_limit: int,
                  journal: Journal | None = None) -> PlaybookState:
        """Run from the start node to the end; the final state (what ``ainvoke`` returns).

        Args:
            first: The state it starts from.
            frame: The playbook's frame.
            recursion_limit: The most nodes it may run.
            journal: Where the runs of its nodes that may not run again are kept, in a
                recoverable pulse (:mod:`sea.engine.journal`), or None.

        Raises:
            GraphRecursionError: more than ``recursion_limit`` nodes ran (as LangGraph's
                own limit; the engine's step bound is lower and comes first).
        """
        found = await self.run_until(first, frame, recursion_limit, None, journal)
        assert not isinstance(found, Handover)
        return found

    async def run_until(
        self, first: PlaybookState, frame: Frame, recursion_limit: int,
        pauses: Callable[[Waits], bool] | None, journal: Journal | None = None,
    ) -> PlaybookState | Handover:
        """:meth:`run`, stopped before the first node that ``pauses`` says may pause for a
        person where it is about to run (its graph then goes on from there)."""
        state = fold({}, first)
        runtime = GraphRuntime(context=frame)
        current, last = self.start, None
        ran = 0
        while current != END:
            if ran >= recursion_limit:
                raise GraphRecursionError(
                    f"Recursion limit of {recursion_limit} reached without hitting a stop "
                    "condition."
                )
            step = self.steps[current]
            if pauses is not None and pauses(step.waits_at(state, frame)):
                routes = last is not None and self.steps[last].pure
                return Handover(state, current, last, ran, routes)
            if journal is not None and current in journal.nodes:
                update = await journal.run(current, partial(step.runner, state, runtime=runtime))
            else:
                update = await step.runner(state, runtime=runtime)
            state = fold(state, update)
            ran += 1
            last = current
            current = step.after(state)
        return state
