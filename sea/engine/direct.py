"""A called playbook run without a nested LangGraph run, for a callee that cannot pause.

A nested LangGraph run costs about a millisecond of setup (channels, configs, callbacks, a
checkpoint at its end), more than most nodes. What it buys a called playbook is a
checkpoint of its own, which matters only when the callee pauses for a person (its resume
goes on from there) or when a recoverable pulse is driven again after a crash (each node
run is kept). A callee that cannot pause (:mod:`sea.engine.waits`), in a pulse that keeps
no checkpoints but for a wait, is therefore run here instead: the same node runners the
compiled graph holds, in order, each update folded in by the state's own reducers, each
edge taken by the same router. Nodes, events, bounds, failures and results are the same;
only the callee's own checkpoint is not made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, get_args, get_type_hints

from langgraph.errors import GraphRecursionError
from langgraph.graph import END
from langgraph.runtime import Runtime as GraphRuntime

from sea.engine.pulse import Frame
from sea.engine.routing import Router
from sea.engine.state import PlaybookState, Update


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


@dataclass(frozen=True, slots=True)
class Step:
    """One node: its runner and where it leads (a fixed target, or a router)."""

    runner: Runner
    static: str | None
    router: Router | None


@dataclass(frozen=True, slots=True)
class DirectGraph:
    """A compiled playbook's nodes and edges, run one after another without Pregel."""

    name: str
    start: str
    steps: Mapping[str, Step]

    async def run(self, first: PlaybookState, frame: Frame, recursion_limit: int) -> PlaybookState:
        """Run from the start node to the end; the final state (what ``ainvoke`` returns).

        Raises:
            GraphRecursionError: more than ``recursion_limit`` nodes ran (as LangGraph's
                own limit; the engine's step bound is lower and comes first).
        """
        state = fold({}, first)
        runtime = GraphRuntime(context=frame)
        current = self.start
        ran = 0
        while current != END:
            if ran >= recursion_limit:
                raise GraphRecursionError(
                    f"Recursion limit of {recursion_limit} reached without hitting a stop "
                    "condition."
                )
            step = self.steps[current]
            state = fold(state, await step.runner(state, runtime=runtime))
            ran += 1
            current = (step.static if step.router is None else step.router(state)) or END
        return state
