"""Engine overhead per step: a playbook of N trivial nodes vs a hand-written LangGraph graph.

Both graphs do the same work in the same process: N nodes alternating "add one to a
counter" (a ``set`` node with ``={count} + 1``) and "do nothing" (a ``pass`` node), with the
same checkpointer used the same way (compiled once; the checkpoint written when the run
ends; for SQLite, one connection kept open between pulses).
The engine's pulse also stores nothing (empty input), emits node events, checks bounds,
evaluates CEL expressions and keeps typed channels; that is the overhead reported, as a
ratio of time per step. Runs alternate between the sides so machine noise hits all alike.

The engine is measured twice: as a host gets it (this chain cannot pause for a person, so a
pulse that keeps no checkpoints runs it without a LangGraph run, :mod:`sea.engine.direct`),
and in a graph of its own (a runtime with ``keep_checkpoints``, which writes the checkpoint
when the run ends, as the hand-written graph does; a worker's pulses and pulses that can wait
run this way). In a graph, consecutive ``set`` and ``pass`` nodes run in one graph step
(:mod:`sea.engine.compiler`), so this chain is one step there: its figure is the cost of
pure nodes in a graph, not of a graph step (a graph step of the engine's costs about 1.2×
the hand-written one's: LangGraph's work over the engine's ten state channels, and the
node's wrapper).

Run: ``PYTHONPATH=. python bench/bench_engine.py [--nodes 100] [--pulses 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import operator
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

import orjson
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.limits import Limits
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.models import Playbook
from sea.llm.models import ModelSet


class OneLibrary:
    """The engine's library port over one in-memory playbook (bench_actions uses it too)."""

    def __init__(self, playbook: Playbook, source: bytes) -> None:
        self._playbook = playbook
        self._hash = hashlib.sha256(source).hexdigest()

    def get(self, name: str) -> Playbook:
        return self._playbook

    def content_hash(self, name: str) -> str:
        return self._hash

    def router_callable(self) -> list[Playbook]:
        return []


def chain_playbook(n: int) -> bytes:
    """A playbook of ``n`` nodes alternating set (count + 1) and pass."""
    nodes: list[dict[str, Any]] = []
    for i in range(n):
        nxt = f"n{i + 1}" if i + 1 < n else None
        if i % 2 == 0:
            nodes.append(
                {
                    "id": f"n{i}",
                    "type": "set",
                    "assignments": {"count": "={count} + 1"},
                    "next": nxt,
                }
            )
        else:
            nodes.append({"id": f"n{i}", "type": "pass", "next": nxt})
    doc = {
        "name": "chain",
        "description": "benchmark chain",
        "input_schema": [{"name": "count", "type": "integer", "required": False, "default": 0}],
        "output_schema": ["count"],
        "start_node": "n0",
        "nodes": nodes,
    }
    return orjson.dumps(doc)


class _HandState(TypedDict):
    count: int
    steps: Annotated[int, operator.add]


def hand_graph(n: int, saver: BaseCheckpointSaver[Any] | None) -> Any:
    """The same chain written directly against LangGraph."""
    builder = StateGraph(_HandState)

    async def inc(state: _HandState) -> dict[str, int]:
        return {"count": state["count"] + 1, "steps": 1}

    async def nothing(state: _HandState) -> dict[str, int]:
        return {"steps": 1}

    for i in range(n):
        builder.add_node(f"n{i}", inc if i % 2 == 0 else nothing)
    builder.add_edge(START, "n0")
    for i in range(n):
        builder.add_edge(f"n{i}", f"n{i + 1}" if i + 1 < n else END)
    return builder.compile(checkpointer=saver)


async def _interleaved(
    pulses: int, sides: list[Callable[[int], Awaitable[None]]]
) -> list[float]:
    """Median seconds per run of each side, alternating runs so machine noise hits all alike."""
    for run in sides:
        await run(-1)  # warm-up (compilation, connections)
    times: list[list[float]] = [[] for _ in sides]
    for i in range(pulses):
        for run, bucket in zip(sides, times, strict=True):
            started = time.perf_counter()
            await run(i)
            bucket.append(time.perf_counter() - started)
    return [statistics.median(bucket) for bucket in times]


async def bench(n: int, pulses: int, kind: str, workdir: Path) -> list[float]:
    """Median seconds per pulse: engine (as a host gets it), engine in a graph of its own,
    hand-written; with checkpointer ``kind``."""
    source = chain_playbook(n)
    playbook = Playbook.model_validate_json(source)
    store = SQLiteStore(workdir / f"memory-{kind}.sqlite")
    persona = Persona("bench", "Bench")
    models = ModelSet.single(ScriptedChatModel.from_mapping({}))
    limits = Limits(max_steps=n + 10, max_visits=10)
    memory_saver = InMemorySaver() if kind == "memory" else None
    runtimes = [
        Runtime(RuntimeConfig(store, models, library=OneLibrary(playbook, source), limits=limits,
                              checkpoint_path=workdir / f"checkpoints-{kind}.sqlite",
                              keep_checkpoints=keep), checkpointer=memory_saver)
        for keep in (False, True)
    ]

    def engine(runtime: Runtime, side: str) -> Callable[[int], Awaitable[None]]:
        async def run(i: int) -> None:
            result = await runtime.arun_pulse(persona, "chain", "", pulse_id=f"{side}{kind}{i}")
            assert result.status == "ok" and result.outputs["count"] == (n + 1) // 2, result.error

        return run

    async def hand_run(graph: Any, i: int) -> None:
        config = {"configurable": {"thread_id": f"h{kind}{i}"}, "recursion_limit": n + 10}
        # as the engine's pulses do (those no other process takes over): the checkpoint
        # is written when the run ends, not after every step
        final = await graph.ainvoke({"count": 0, "steps": 0}, config, durability="exit")
        assert final["count"] == (n + 1) // 2

    compiled = hand_graph(n, memory_saver)  # compiled once, like the engine's graphs

    try:
        async with AsyncSqliteSaver.from_conn_string(str(workdir / f"hand-{kind}.sqlite")) as sq:
            # like the engine: one connection kept open between pulses
            bound = compiled if kind == "memory" else compiled.copy(update={"checkpointer": sq})

            async def hand(i: int) -> None:
                await hand_run(bound, i)

            sides = [engine(runtimes[0], "e"), engine(runtimes[1], "g"), hand]
            return await _interleaved(pulses, sides)
    finally:
        for runtime in runtimes:
            await runtime.aclose()
            runtime.close()
        store.close()


def main() -> None:
    """Print per-step times and the engine/hand-written ratio for both checkpointers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pulses", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("sqlite", "memory"):
            direct_s, graph_s, hand_s = asyncio.run(
                bench(args.nodes, args.pulses, kind, Path(tmp)))
            per = [t / args.nodes * 1e6 for t in (direct_s, graph_s, hand_s)]
            print(
                f"{kind:>6} checkpointer, {args.nodes} nodes: hand-written LangGraph "
                f"{per[2]:.0f} µs/step; engine {per[0]:.0f} µs/step, ratio "
                f"{per[0] / per[2]:.2f}x; engine in a graph of its own {per[1]:.0f} µs/step, "
                f"ratio {per[1] / per[2]:.2f}x"
            )


if __name__ == "__main__":
    main()
