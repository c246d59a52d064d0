"""The runtime's checkpoint file: pulses on one event loop share one connection."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.host.checkpoints import SqliteCheckpoints
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.engine.conftest import MakeRuntime


def test_pulses_running_together_share_one_saver(tmp_path: Path) -> None:
    checkpoints = SqliteCheckpoints(tmp_path / "deep" / "checkpoints.sqlite", linger=0)
    seen: list[Any] = []

    async def pulse(started: asyncio.Event, others: asyncio.Event) -> None:
        async with checkpoints.saver() as saver:
            seen.append(saver)
            started.set()
            await others.wait()  # both are inside at once

    async def main() -> Any:
        first, second = asyncio.Event(), asyncio.Event()
        await asyncio.gather(pulse(first, second), pulse(second, first))
        async with checkpoints.saver() as later:
            return later

    later = asyncio.run(main())
    assert len(seen) == 2 and seen[0] is seen[1]
    assert later is not seen[0]  # the last user closed it; the next pulse opens anew
    assert (tmp_path / "deep" / "checkpoints.sqlite").is_file()


def _saver_threads(settle_s: float = 1.0) -> int:
    """The SQLite connections' threads alive, once those that were told to stop have
    (a closed connection's thread ends a moment after the close returns)."""
    import threading
    import time

    def alive() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if "_connection_worker_thread" in t.name]

    deadline = time.monotonic() + settle_s
    threads = alive()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return len(alive())


def test_a_saver_stays_open_for_the_next_pulse_and_closes_when_idle(tmp_path: Path) -> None:
    checkpoints = SqliteCheckpoints(tmp_path / "checkpoints.sqlite", linger=0.2)
    before = _saver_threads()

    async def main() -> tuple[Any, Any, Any, int]:
        async with checkpoints.saver() as first:
            pass
        async with checkpoints.saver() as second:  # within the linger: the same one
            pass
        await asyncio.sleep(0.5)  # idle longer than the linger: closed
        idle = _saver_threads()
        async with checkpoints.saver() as third:
            pass
        return first, second, third, idle

    first, second, third, idle = asyncio.run(main())
    assert first is second and third is not first
    assert idle == before
    assert _saver_threads() == before  # the loop's end closed the lingering one


def test_aclose_closes_a_lingering_saver_at_once(tmp_path: Path) -> None:
    checkpoints = SqliteCheckpoints(tmp_path / "checkpoints.sqlite", linger=60)
    before = _saver_threads()

    async def main() -> tuple[int, int, bool]:
        async with checkpoints.saver() as first:
            pass
        lingering = _saver_threads(settle_s=0.1)
        await checkpoints.aclose()
        closed = _saver_threads()
        async with checkpoints.saver() as second:
            await checkpoints.aclose()  # in use: left open
            return lingering, closed, second is first

    lingering, closed, same = asyncio.run(main())
    assert (lingering, closed, same) == (before + 1, before, False)


def test_many_concurrent_pulses_of_one_runtime_all_end_ok(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime()

    async def all_of_them() -> list[Any]:
        return list(
            await asyncio.gather(
                *(
                    runtime.arun_pulse(persona, "counter_loop", "", pulse_id=f"p{k}",
                                       args={"limit": k + 1})
                    for k in range(6)
                )
            )
        )

    results = asyncio.run(all_of_them())
    assert [(r.status, r.outputs["count"]) for r in results] == [("ok", k + 1) for k in range(6)]


def test_the_checkpoint_file_gives_back_the_space_of_ended_pulses(
    tmp_path: Path, persona: Persona
) -> None:
    import json

    from langchain_core.tools import tool


    @tool
    def big() -> str:
        """Return a large text."""
        return "x" * 900_000

    books = tmp_path / "books"
    books.mkdir()
    (books / "heavy.json").write_text(json.dumps({
        "name": "heavy", "description": "Holds a large value.", "start_node": "get",
        "nodes": [{"id": "get", "type": "tool", "action": "big", "output_key": "blob",
                   "next": "done"},
                  {"id": "done", "type": "set", "assignments": {"size": "=size({blob})"}}],
    }))
    path = tmp_path / "checkpoints.sqlite"
    store = SQLiteStore(tmp_path / "memory.sqlite")
    model = ModelSet.single(ScriptedChatModel.from_mapping({}))
    with Runtime(RuntimeConfig(store, model, tools=[big], library=PlaybookLibrary([books]),
                 checkpoint_path=path)) as runtime:
        for _ in range(3):
            result = runtime.run_pulse(persona, "heavy", "go")
            assert result.status == "ok", result.error
    assert path.stat().st_size < 500_000  # megabytes were written, and given back


def _checkpoint_of(saver: Any, thread: str, owner: str, *, wait: bool) -> None:
    """A pulse's checkpoint in ``saver`` as a process ``owner`` left it (waiting or not)."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt
    from typing_extensions import TypedDict

    from sea.host.checkpoints import OWNER_KEY

    class State(TypedDict):
        n: int

    def step(state: State) -> State:
        if wait:
            interrupt({"ask": "approve?"})
        return {"n": state["n"] + 1}

    graph = StateGraph(State)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_edge("step", END)
    compiled = graph.compile(checkpointer=saver)
    compiled.invoke({"n": 0}, {"configurable": {"thread_id": thread},
                               "metadata": {OWNER_KEY: owner}})


def test_the_sweep_removes_only_ended_processes_pulses_that_do_not_wait() -> None:

    from sea.host.checkpoints import sweep_orphans

    saver = InMemorySaver()
    _checkpoint_of(saver, "orphan", "here:101", wait=False)
    _checkpoint_of(saver, "waiting", "here:101", wait=True)
    _checkpoint_of(saver, "alive", "here:202", wait=False)
    _checkpoint_of(saver, "elsewhere", "there:101", wait=False)
    _checkpoint_of(saver, "unowned", "no-pid", wait=False)

    removed = asyncio.run(sweep_orphans(saver, host="here", alive=lambda pid: pid == 202))

    assert removed == ["orphan"]
    left = {item.config["configurable"]["thread_id"] for item in saver.list(None)}
    assert left == {"waiting", "alive", "elsewhere", "unowned"}
