"""The pulse's views of the runtime's saver: reads a new pulse need not ask, and the
checkpoints of a pulse that may never need them, held in memory."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.limits import Limits
from sea.host.config import RuntimeConfig
from sea.host.pulse_savers import FreshPulse, HeldPulse
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.engine.test_runtime import send_mail


class CountingSaver(InMemorySaver):
    """An in-memory saver that counts the reads (by namespace), the writes and the removals
    that reach it."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []
        self.wrote: list[tuple[str, str]] = []
        self.removed: list[str] = []

    async def aget_tuple(self, config: Any) -> Any:
        self.reads.append(config["configurable"].get("checkpoint_ns", ""))
        return await super().aget_tuple(config)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.wrote.append(("put", config["configurable"].get("checkpoint_ns", "")))
        return await super().aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        self.wrote.append(("writes", config["configurable"].get("checkpoint_ns", "")))
        await super().aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.removed.append(thread_id)
        await super().adelete_thread(thread_id)


def _config(thread: str, namespace: str = "") -> Any:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": namespace}}


def test_a_fresh_pulse_reads_no_checkpoint_it_has_not_written() -> None:
    saver = CountingSaver()

    async def main() -> None:
        fresh = FreshPulse(saver, "p1")
        assert await fresh.aget_tuple(_config("p1")) is None
        assert await fresh.aget_tuple(_config("p1", "call:1")) is None
        assert saver.reads == []  # answered without the store
        checkpoint = empty_checkpoint()
        stored = await fresh.aput(_config("p1", "call:1"), checkpoint, {}, {})
        found = await fresh.aget_tuple(stored)
        assert found is not None and found.checkpoint["id"] == checkpoint["id"]
        assert saver.reads == ["call:1"]  # written: asked from now on
        assert await fresh.aget_tuple(_config("p1")) is None  # the root still is not
        assert await fresh.aget_tuple(_config("other")) is None
        assert saver.reads == ["call:1", ""]  # another thread's read goes to the saver
        assert [t.config["configurable"]["checkpoint_ns"] async for t in fresh.alist(
            _config("p1", "call:1"))] == ["call:1"]  # every other method is the saver's
        await fresh.adelete_thread("p1")
        assert await saver.aget_tuple(_config("p1", "call:1")) is None

    asyncio.run(main())


def test_a_nested_pulse_starts_without_reading_checkpoints_and_still_waits_and_resumes(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    limits = Limits(approval_tools=frozenset({"send_mail"}))
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      tools=[send_mail], library=library, limits=limits), checkpointer=saver)
    try:
        done = runtime.run_pulse(persona, "nest_a", "")
        assert done.status == "ok", done.error
        assert saver.reads == []  # three graphs started, none asked for a checkpoint
        waiting = runtime.run_pulse(persona, "approval_nested", "dave")
        assert waiting.status == "waiting", waiting.error
        assert saver.reads == []
        resumed = runtime.run_resume(waiting.pulse_id, "approve")
        assert resumed.status == "ok", resumed.error
        assert resumed.outputs == {"outcome": "sent", "after": "saw sent"}
        assert len(saver.reads) >= 2  # the resumed graphs read what the wait wrote
    finally:
        runtime.close()


def _checkpoint(values: dict[str, Any]) -> Any:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = {name: "1" for name in values}
    return checkpoint


def test_a_held_pulse_writes_nothing_until_flushed_then_all_in_order_as_copies() -> None:
    saver = CountingSaver()

    async def main() -> None:
        held = HeldPulse(saver, "p1")
        values = {"vars": {"topic": "tea"}, "outputs": ["first"]}
        first = await held.aput(_config("p1", "call:1"), _checkpoint(values), {"step": 1},
                                {"vars": "1", "outputs": "1"})
        answer = {"approved": False}
        await held.aput_writes(first, [("__interrupt__", answer)], "task-1")
        root = await held.aput(_config("p1"), _checkpoint({"steps": 3}), {"step": 3},
                               {"steps": "1"})
        assert saver.wrote == [] and saver.reads == []  # the store saw nothing
        found = await held.aget_tuple(_config("p1", "call:1"))  # read from what is held
        assert found.checkpoint["channel_values"] == values
        assert found.pending_writes == [("task-1", "__interrupt__", {"approved": False})]
        assert await held.aget_tuple(_config("p1", "call:2")) is None
        assert saver.reads == []
        await held.aput(_config("other"), _checkpoint({"steps": 1}), {}, {"steps": "1"})
        assert saver.wrote == [("put", "")]  # another thread's write is the saver's at once
        # changed after they were written: the held copies keep what was written
        values["outputs"].append("later")
        values["vars"]["topic"] = "coffee"
        answer["approved"] = True
        await held.flush()
        assert saver.wrote == [("put", ""), ("put", "call:1"), ("writes", "call:1"),
                                ("put", "")]
        stored = await saver.aget_tuple(first)
        assert stored.checkpoint["channel_values"] == {"vars": {"topic": "tea"},
                                                       "outputs": ["first"]}
        assert stored.metadata["step"] == 1
        assert stored.pending_writes == [("task-1", "__interrupt__", {"approved": False})]
        latest = await saver.aget_tuple(_config("p1"))
        assert latest.config["configurable"]["checkpoint_id"] == (
            root["configurable"]["checkpoint_id"])
        assert latest.checkpoint["channel_values"] == {"steps": 3}
        # flushed: the view is the saver's now
        await held.aput(_config("p1", "call:3"), _checkpoint({"steps": 1}), {}, {"steps": "1"})
        assert saver.wrote[-1] == ("put", "call:3")

    asyncio.run(main())


def _counting_runtime(
    store: SQLiteStore, library: PlaybookLibrary, saver: CountingSaver, **options: Any
) -> Runtime:
    limits = Limits(approval_tools=frozenset({"send_mail"}))
    options.setdefault("tools", [send_mail])
    return Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                   library=library, limits=limits, **options), checkpointer=saver)


def test_a_pulse_that_does_not_wait_writes_and_removes_no_checkpoint(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = _counting_runtime(store, library, saver)
    try:
        done = runtime.run_pulse(persona, "nest_a", "")
        assert done.status == "ok", done.error
        failed = runtime.run_pulse(persona, "runs_then_fails", "")
        assert failed.status == "error"
        assert saver.wrote == [] and saver.removed == [] and saver.reads == []
        assert not saver.storage
    finally:
        runtime.close()


def test_a_pulse_that_waits_writes_what_it_held_and_is_resumed_from_it(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = _counting_runtime(store, library, saver)
    try:
        waiting = runtime.run_pulse(persona, "approval_nested", "dave")
        assert waiting.status == "waiting", waiting.error
        namespaces = {namespace for _, namespace in saver.wrote}
        assert "" in namespaces and len(namespaces) >= 2  # the pulse's graph and the callee's
        assert saver.removed == []
        resumed = runtime.run_resume(waiting.pulse_id, "approve")
        assert resumed.status == "ok", resumed.error
        assert resumed.outputs == {"outcome": "sent", "after": "saw sent"}
        assert saver.removed == [waiting.pulse_id]  # ended: its checkpoints are removed
    finally:
        runtime.close()


def test_kept_pulses_write_their_checkpoints_to_the_store(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = _counting_runtime(store, library, saver, keep_checkpoints=True)
    try:
        done = runtime.run_pulse(persona, "nest_a", "")
        assert done.status == "ok", done.error
        assert ("put", "") in saver.wrote and saver.removed == []
        assert saver.reads == []  # a new pulse still asks for none
    finally:
        runtime.close()
