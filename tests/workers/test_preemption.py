"""A user's pulse preempts a running autonomous pulse of the same persona, in process: the
autonomous one yields its turn before its next node, the user's runs, then the autonomous
one goes on where it stopped (``when_preempted="resume"``) or ends (``"drop"``), and
nothing either stored is lost. Waiting pulses take their turns by priority."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from saimemory import MessageStore, Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import Event
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.host.turns import BusyPolicy
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet

AOI = Persona("aoi", "Aoi", "You are Aoi.")

AUTO = {
    "name": "auto_work",
    "description": "Autonomous work: a note, a long tool call, another note.",
    "start_node": "before",
    "nodes": [
        {"id": "before", "type": "memorize", "action": "auto before", "next": "hold"},
        {"id": "hold", "type": "tool", "action": "hold", "output_key": "held", "next": "after"},
        {"id": "after", "type": "memorize", "action": "auto after", "next": None},
    ],
}
CHAT = {
    "name": "chat_now",
    "description": "The user's turn: an answer, remembered.",
    "input_schema": [{"name": "input", "description": "What the user said"}],
    "start_node": "reply",
    "nodes": [{"id": "reply", "type": "llm", "action": "Answer: {input}",
               "memorize": {"tags": ["conversation"]}, "next": None}],
}


class Gate:
    """The ``hold`` tool: it tells when it runs and returns once released."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def hold(self) -> str:
        self.entered.set()
        await self.release.wait()
        return "held"


def gated_runtime(store: MessageStore, tmp_path: Path, gate: Gate, replies: list[str],
                  checkpoint_path: Path | str, **config: Any) -> Runtime:
    """A runtime whose playbooks are ``AUTO`` (its tool holds at ``gate``) and ``CHAT`` (the
    scripted model answers it with ``replies``), checkpointing to ``checkpoint_path``."""
    books = tmp_path / "books"
    books.mkdir(exist_ok=True)
    for document in (AUTO, CHAT):
        (books / f"{document['name']}.json").write_text(json.dumps(document), encoding="utf-8")
    tool = StructuredTool.from_function(coroutine=gate.hold, name="hold",
                                        description="Hold until released.")
    model = ScriptedChatModel(responses={"chat_now.reply": replies})
    return Runtime(RuntimeConfig(store, ModelSet.single(model), tools=[tool],
                                 library=PlaybookLibrary.bundled([books]),
                                 checkpoint_path=checkpoint_path, **config))


def _runtime(store: SQLiteStore, tmp_path: Path, gate: Gate, **config: Any) -> Runtime:
    return gated_runtime(store, tmp_path, gate, ["Hello there.", "Hi again."],
                         tmp_path / "checkpoints.sqlite", **config)


async def _preempt(runtime: Runtime, gate: Gate) -> tuple[Any, Any, list[tuple[str, Event]]]:
    """Start the autonomous pulse, submit the user's while its tool runs, then let the
    tool end; both results and every event of both, in the order they happened."""
    order: list[tuple[str, Event]] = []
    auto = asyncio.create_task(runtime.arun_pulse(
        AOI, "auto_work", "", priority="autonomous",
        observe=lambda e: order.append(("auto", e))))
    await gate.entered.wait()
    user = asyncio.create_task(runtime.arun_pulse(
        AOI, "chat_now", "Are you there?", priority="user",
        observe=lambda e: order.append(("user", e))))
    while not any(who == "user" and e.kind == "warning" for who, e in order):
        await asyncio.sleep(0)  # until the user's pulse waits for its turn
    gate.release.set()
    done = await asyncio.gather(auto, user)
    return done[0], done[1], order


def _at(order: list[tuple[str, Event]], who: str, kind: str, node: str | None = None) -> int:
    return next(i for i, (w, e) in enumerate(order)
                if w == who and e.kind == kind and (node is None or getattr(e, "node", None)
                                                    == node))


def test_a_user_pulse_preempts_an_autonomous_one_which_then_goes_on(
    store: SQLiteStore, tmp_path: Path
) -> None:
    gate = Gate()
    runtime = _runtime(store, tmp_path, gate)
    try:
        auto, user, order = asyncio.run(_preempt(runtime, gate))
    finally:
        runtime.close()
    assert auto.status == "ok", auto.error
    assert user.status == "ok", user.error
    submitted = _at(order, "user", "warning")
    user_done = _at(order, "user", "node_end", "reply")  # the user's last node
    # the user's pulse started within one node: the autonomous one started no node between
    # the user's submission and the user's last node (only its running node finished)
    between = [e for w, e in order[submitted:user_done] if w == "auto" and e.kind == "node_start"]
    assert between == []
    assert submitted < _at(order, "auto", "node_end", "hold") < _at(order, "user", "pulse_start")
    assert _at(order, "auto", "node_start", "after") > user_done
    yielded = [e for w, e in order if w == "auto" and e.kind == "warning"]
    assert [e.code for e in yielded] == ["preempted"]  # type: ignore[attr-defined]
    # nothing either wrote is lost, in the order it happened
    texts = [m.content for m in store.iter_messages(AOI.id)]
    assert texts.index("auto before") < texts.index("Are you there?")
    assert texts.index("Hello there.") < texts.index("auto after")


def test_the_host_may_drop_the_preempted_pulse(store: SQLiteStore, tmp_path: Path) -> None:
    gate = Gate()
    runtime = _runtime(store, tmp_path, gate, when_preempted="drop")
    try:
        auto, user, _ = asyncio.run(_preempt(runtime, gate))
    finally:
        runtime.close()
    assert user.status == "ok", user.error
    assert auto.status == "error" and auto.error["code"] == "SEA590"
    texts = [m.content for m in store.iter_messages(AOI.id)]
    assert "auto before" in texts and "Hello there." in texts  # what it stored stays
    assert "auto after" not in texts


def test_pulses_of_equal_priority_do_not_preempt(store: SQLiteStore, tmp_path: Path) -> None:
    gate = Gate()
    runtime = _runtime(store, tmp_path, gate)

    async def both() -> list[tuple[str, Event]]:
        order: list[tuple[str, Event]] = []
        first = asyncio.create_task(runtime.arun_pulse(
            AOI, "auto_work", "", observe=lambda e: order.append(("auto", e))))
        await gate.entered.wait()
        second = asyncio.create_task(runtime.arun_pulse(
            AOI, "chat_now", "Are you there?", observe=lambda e: order.append(("user", e))))
        while not any(w == "user" and e.kind == "warning" for w, e in order):
            await asyncio.sleep(0)
        gate.release.set()
        await asyncio.gather(first, second)
        return order

    try:
        order = asyncio.run(both())
    finally:
        runtime.close()
    assert _at(order, "auto", "node_end", "after") < _at(order, "user", "pulse_start")
    assert not [e for w, e in order if w == "auto" and e.kind == "warning"]


def test_waiting_pulses_take_their_turns_by_priority(store: SQLiteStore, tmp_path: Path) -> None:
    gate = Gate()
    runtime = _runtime(store, tmp_path, gate)

    async def three() -> list[tuple[str, Event]]:
        order: list[tuple[str, Event]] = []

        def waiting(who: str) -> Any:
            return lambda e: order.append((who, e))

        async def waits(who: str) -> None:
            while not any(w == who and e.kind == "warning" for w, e in order):
                await asyncio.sleep(0)

        running = asyncio.create_task(runtime.arun_pulse(
            AOI, "auto_work", "", observe=waiting("running")))  # a user's: never yields
        await gate.entered.wait()
        scheduled = asyncio.create_task(runtime.arun_pulse(
            AOI, "chat_now", "scheduled", priority="scheduled", observe=waiting("scheduled")))
        await waits("scheduled")
        user = asyncio.create_task(runtime.arun_pulse(
            AOI, "chat_now", "user", observe=waiting("user")))
        await waits("user")
        gate.release.set()
        await asyncio.gather(running, scheduled, user)
        return order

    try:
        order = asyncio.run(three())
    finally:
        runtime.close()
    assert not [e for w, e in order if w == "running" and e.kind == "warning"]
    # the user's came later but went first
    assert _at(order, "user", "pulse_start") < _at(order, "scheduled", "pulse_start")


def test_an_unknown_priority_or_preemption_policy_is_refused() -> None:
    with pytest.raises(UsageError, match="when_preempted"):
        BusyPolicy("wait", 1.0, "pause")  # type: ignore[arg-type]
