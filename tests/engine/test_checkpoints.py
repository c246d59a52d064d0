"""The runtime's checkpoint file: pulses on one event loop share one connection."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from saimemory.records import Persona
from sea.host.checkpoints import SqliteCheckpoints
from tests.engine.conftest import MakeRuntime


def test_pulses_running_together_share_one_saver(tmp_path: Path) -> None:
    checkpoints = SqliteCheckpoints(tmp_path / "deep" / "checkpoints.sqlite")
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

    from saimemory.sqlite import SQLiteStore
    from sea.chat.scripted import ScriptedChatModel
    from sea.host.runtime import Runtime
    from sea.lang.library import PlaybookLibrary
    from sea.llm.models import ModelSet

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
    with Runtime(store, model, tools=[big], library=PlaybookLibrary([books]),
                 checkpoint_path=path) as runtime:
        for _ in range(3):
            result = runtime.run_pulse(persona, "heavy", "go")
            assert result.status == "ok", result.error
    assert path.stat().st_size < 500_000  # megabytes were written, and given back
