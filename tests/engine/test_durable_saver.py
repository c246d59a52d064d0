"""A recoverable pulse's view of the saver (:mod:`sea.host.durable_saver`): no task writes
that the next checkpoint holds, no graph's input checkpoint; what a wait, a failure or a
read needs is written all the same."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.host.durable_saver import DurablePulse
from sea.lang.library import PlaybookLibrary
from tests.engine.test_pulse_savers import CountingSaver, _counting_runtime


def _config(namespace: str = "", checkpoint_id: str | None = None) -> Any:
    configurable = {"thread_id": "p1", "checkpoint_ns": namespace}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def test_a_recoverable_pulse_writes_only_its_steps_checkpoints(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = _counting_runtime(store, library, saver, keep_checkpoints=True)
    try:
        done = runtime.run_pulse(persona, "nest_a", "", pulse_id="r1", recover=True)
        assert done.status == "ok", done.error
        kinds = {kind for kind, _ in saver.wrote}
        assert kinds == {"put"}, saver.wrote  # no task writes
        assert len({namespace for _, namespace in saver.wrote}) >= 2  # callees' too
        sources = {t.metadata["source"] for t in saver.list(None)}
        assert sources == {"loop"}, sources  # no graph's input checkpoint
        again = runtime.run_continue("r1")  # ended: its end again, nothing run anew
        assert again.status == "ok" and again.outputs == done.outputs, again.error
    finally:
        runtime.close()


def test_a_recoverable_pulse_that_waits_is_resumed_from_what_it_wrote(
    store: SQLiteStore, library: PlaybookLibrary, persona: Persona
) -> None:
    saver = CountingSaver()
    runtime = _counting_runtime(store, library, saver, keep_checkpoints=True)
    try:
        waiting = runtime.run_pulse(persona, "approval_nested", "dave", pulse_id="w1",
                                    recover=True)
        assert waiting.status == "waiting", waiting.error
        assert ("writes", "") in saver.wrote  # the interrupt's, which no checkpoint follows
        resumed = runtime.run_resume("w1", "approve")
        assert resumed.status == "ok", resumed.error
        assert resumed.outputs == {"outcome": "sent", "after": "saw sent"}
    finally:
        runtime.close()


def test_held_writes_and_inputs_are_dropped_by_the_next_checkpoint_or_written_when_needed(
) -> None:
    saver = CountingSaver()
    view = DurablePulse(saver, "p1")

    async def main() -> None:
        first, second, third = (empty_checkpoint() for _ in range(3))
        await view.aput(_config(), first, {"source": "input", "step": -1}, {})
        await view.aput_writes(_config(checkpoint_id=first["id"]), [("x", 1)], "t1")
        assert saver.wrote == []  # both held
        await view.aput(_config(checkpoint_id=first["id"]), second,
                        {"source": "loop", "step": 0}, {})
        assert saver.wrote == []  # the input mapped (its __start__ step): held in its place
        inner = [empty_checkpoint() for _ in range(3)]  # a callee's, in the next step
        await view.aput(_config("call:1"), inner[0], {"source": "input", "step": -1}, {})
        await view.aput(_config("call:1", inner[0]["id"]), inner[1],
                        {"source": "loop", "step": 0}, {})
        assert saver.wrote == []  # the callee's input and first step: held too
        await view.aput(_config("call:1", inner[1]["id"]), inner[2],
                        {"source": "loop", "step": 1}, {})
        # the callee's node ran: the enclosing graph's held checkpoint is written first
        # (started again, its next step's tasks would have other ids: other namespaces)
        assert saver.wrote == [("put", ""), ("put", "call:1")]
        saver.wrote.clear()
        step, writes = empty_checkpoint(), [("x", 2)]
        await view.aput_writes(_config(checkpoint_id=second["id"]), writes, "t2")
        await view.aput(_config(checkpoint_id=second["id"]), step,
                        {"source": "loop", "step": 1}, {})
        assert saver.wrote == [("put", "")]  # the first node's step's checkpoint
        second = step
        await view.aput_writes(_config(checkpoint_id=second["id"]), [("x", 2)], "t2")
        await view.aput_writes(_config(checkpoint_id=second["id"]),
                               [("__interrupt__", "ask")], "t2")
        assert saver.wrote[1:] == [("writes", ""), ("writes", "")]  # held, then the wait's
        await view.aput(_config("sub"), third, {"source": "input", "step": -1}, {})
        found = await view.aget_tuple(_config("sub"))  # a read: what is held is written
        assert found is not None and found.checkpoint["id"] == third["id"]
        other = {"configurable": {"thread_id": "p2", "checkpoint_ns": ""}}
        await view.aput(other, empty_checkpoint(), {"source": "input", "step": -1}, {})
        assert saver.wrote[-2:] == [("put", "sub"), ("put", "")]  # another thread's: as is

    asyncio.run(main())
