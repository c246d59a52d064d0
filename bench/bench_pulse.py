"""A real pulse as a host sees it: the bundled ``meta_user`` on a scripted model, against
the same pulse written by hand as one LangGraph program over the same store and model.

The engine's pulse routes (``sub_router_user``: list the playbooks, read the plan memory,
ask the model for a structured decision), takes ``basic_chat`` and speaks (``sub_speak``:
a streamed reply, stored). The hand-written program does the same work directly: it stores
the input, reads the history and the same two tool results, asks the same model for the
same structured decision (validated against the same schema), streams the reply and stores
it, in a two-node LangGraph graph compiled once, with the same checkpointer used the same way
(written when the pulse ends, then removed). Runs alternate between the two so machine noise
hits both alike.

The model time of a pulse is the time spent inside the scripted model (its answer and
chunks); the rest of the wall time is the engine's (or, for the hand-written program, the
program's own). Pulses rotate over eight personas, so each persona's history stays within
the default budget and no short-term memory summary is asked for (the hand-written program
does not summarize). A second profile of the engine's pulses lists where the time goes.

Backends: ``sqlite`` (SQLite store, SQLite checkpoints), ``memory`` (SQLite store,
checkpoints in memory) and, with ``--postgres DSN``, ``postgres`` (store and checkpoints in
PostgreSQL; the DSN's database gets the tables).

Run: ``PYTHONPATH=. python bench/bench_pulse.py [--pulses 60] [--postgres DSN] [--profile]``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from pydantic import PrivateAttr

from saimemory import MessageStore, NewMessage, Persona
from sea.chat.scripted import ScriptedChatModel
from sea.engine.plans.memory import plan_memory
from sea.host.runtime import Runtime
from sea.lang.jsonschemas import validator
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet

DECISION = {"playbook": "basic_chat", "reason": "a greeting needs no lookup"}
REPLY = "Hello! It is good to hear from you again; how was the walk?"
PERSONAS = [Persona(f"p{i}", f"Aoi{i}", "You are Aoi, a warm and curious companion.")
            for i in range(8)]


class TimedModel(ScriptedChatModel):
    """The scripted model, counting the seconds spent inside it."""

    _spent: list[float] = PrivateAttr(default_factory=lambda: [0.0])

    @property
    def spent(self) -> float:
        """Seconds spent answering so far."""
        return self._spent[0]

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: Any = None, **kwargs: Any) -> ChatResult:
        started = time.perf_counter()
        try:
            return await super()._agenerate(messages, stop, run_manager, **kwargs)
        finally:
            self._spent[0] += time.perf_counter() - started

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: Any = None, **kwargs: Any
                       ) -> AsyncIterator[ChatGenerationChunk]:
        stream = super()._astream(messages, stop, run_manager, **kwargs)
        while True:
            started = time.perf_counter()
            try:
                chunk = await anext(stream)
            except StopAsyncIteration:
                return
            finally:
                self._spent[0] += time.perf_counter() - started
            yield chunk


def timed_model(pulses: int) -> TimedModel:
    return TimedModel(responses={"sub_router_user.decide": [DECISION] * pulses,
                                 "sub_speak.compose": [REPLY] * pulses})


class _HandState(TypedDict, total=False):
    persona: str
    pulse_id: str
    decision: dict[str, Any]
    reply: str


def hand_program(store: MessageStore, model: ScriptedChatModel, library: PlaybookLibrary,
                 saver: BaseCheckpointSaver[Any]) -> Callable[[Persona, str], Awaitable[None]]:
    """The pulse written by hand: store the input, decide, speak, store the reply."""
    router = library.get("sub_router_user")
    schema = next(n.response_schema for n in router.nodes if n.id == "decide")  # type: ignore[attr-defined]
    check = validator(schema)
    decide_model = model.with_structured_output(schema, include_raw=True)
    by_id = {p.id: p for p in PERSONAS}

    def context(persona: Persona, pulse_id: str) -> list[BaseMessage]:
        messages: list[BaseMessage] = [SystemMessage(persona.system_prompt)]
        for m in store.history(persona.id, pulse_id=pulse_id):
            messages.append(AIMessage(m.content) if m.role == "assistant"
                            else HumanMessage(m.content))
        return messages

    async def route(state: _HandState) -> _HandState:
        persona = by_id[state["persona"]]

        def gather() -> list[BaseMessage]:
            offered = [f"- {p.name}: {p.description}" for p in library.router_callable()]
            plans = plan_memory(store.current_plan(persona.id))
            messages = context(persona, state["pulse_id"])
            messages.append(HumanMessage("Choose a playbook:\n" + "\n".join(offered)
                                         + "\n" + plans["note"]))
            return messages

        messages = await asyncio.to_thread(gather)
        answer = await decide_model.ainvoke(messages, config={"metadata": {
            "sea_playbook": "sub_router_user", "sea_node": "decide"}})
        decision = answer["parsed"]
        assert check.is_valid(decision), decision
        return {"decision": decision}

    async def speak(state: _HandState) -> _HandState:
        persona = by_id[state["persona"]]
        messages = await asyncio.to_thread(context, persona, state["pulse_id"])
        parts = [str(chunk.content) async for chunk in model.astream(messages, config={
            "metadata": {"sea_playbook": "sub_speak", "sea_node": "compose"}})]
        reply = "".join(parts)
        await asyncio.to_thread(store.append, NewMessage(
            persona=persona.id, role="assistant", content=reply, tags=("conversation",),
            pulse_id=state["pulse_id"]))
        return {"reply": reply}

    builder = StateGraph(_HandState)
    builder.add_node("route", route)
    builder.add_node("speak", speak)
    builder.add_edge(START, "route")
    builder.add_conditional_edges("route", lambda s: "speak", ["speak"])
    builder.add_edge("speak", END)
    graph = builder.compile(checkpointer=saver)

    async def pulse(persona: Persona, text: str) -> None:
        pulse_id = uuid.uuid4().hex
        await asyncio.to_thread(store.append, NewMessage(
            persona=persona.id, role="user", content=text, tags=("conversation",),
            pulse_id=pulse_id))
        config: Any = {"configurable": {"thread_id": pulse_id}}
        final = await graph.ainvoke({"persona": persona.id, "pulse_id": pulse_id}, config,
                                    durability="exit")
        assert final["reply"] == REPLY
        await saver.adelete_thread(pulse_id)

    return pulse


async def _saver(kind: str, workdir: Path, dsn: str | None,
                 stack: AsyncExitStack) -> BaseCheckpointSaver[Any]:
    if kind == "memory":
        return InMemorySaver()
    if kind == "sqlite":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        return await stack.enter_async_context(
            AsyncSqliteSaver.from_conn_string(str(workdir / "hand.checkpoints.sqlite")))
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    saver = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(str(dsn)))
    await saver.setup()
    return saver


def _store(kind: str, workdir: Path, side: str, dsn: str | None) -> MessageStore:
    if kind == "postgres":
        from saimemory.postgres import PostgresStore

        return PostgresStore(f"{dsn}{'&' if '?' in str(dsn) else '?'}schema=bench_{side}")
    from saimemory.sqlite import SQLiteStore

    return SQLiteStore(workdir / f"{side}.sqlite")


class Sample:
    """Wall and model seconds of each measured pulse of one side."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.model: list[float] = []

    def engine(self) -> list[float]:
        return [w - m for w, m in zip(self.wall, self.model, strict=True)]


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"{statistics.median(ordered) * 1e3:6.1f} / {p90 * 1e3:6.1f}"


async def bench(kind: str, pulses: int, workdir: Path, dsn: str | None,
                profile: cProfile.Profile | None) -> tuple[Sample, Sample]:
    """(engine, hand-written) samples of ``pulses`` alternated pulses on backend ``kind``."""
    warm = 8
    library = PlaybookLibrary.bundled([])
    sea_model, hand_model = timed_model(pulses + warm), timed_model(pulses + warm)
    sea_store, hand_store = (_store(kind, workdir, side, dsn) for side in ("engine", "hand"))
    checkpoints: dict[str, Any] = (
        {"checkpointer": InMemorySaver()} if kind == "memory"
        else {"checkpoint_path": dsn if kind == "postgres" else workdir / "checkpoints.sqlite"})
    runtime = Runtime(sea_store, ModelSet(normal=sea_model, lightweight=sea_model),
                      library=library, **checkpoints)
    sea_side, hand_side = Sample(), Sample()
    async with AsyncExitStack() as stack:
        hand = hand_program(hand_store, hand_model, library,
                            await _saver(kind, workdir, dsn, stack))

        async def engine_pulse(persona: Persona, text: str) -> None:
            result = await runtime.arun_pulse(persona, "meta_user", text)
            assert result.status == "ok" and result.spoken == [REPLY], result.error

        sides: list[tuple[Callable[[Persona, str], Awaitable[None]], TimedModel, Sample]] = [
            (engine_pulse, sea_model, sea_side), (hand, hand_model, hand_side)]
        for i in range(warm + pulses):
            persona = PERSONAS[i % len(PERSONAS)]
            for run, model, sample in sides:
                spent, started = model.spent, time.perf_counter()
                if profile is not None and run is engine_pulse and i >= warm:
                    profile.enable()
                await run(persona, f"Hello again, it is message {i}.")
                if profile is not None:
                    profile.disable()
                if i >= warm:
                    sample.wall.append(time.perf_counter() - started)
                    sample.model.append(model.spent - spent)
    await runtime.aclose()
    runtime.close()
    sea_store.close()
    hand_store.close()
    return sea_side, hand_side


def main() -> None:
    """Print per-pulse times (median / p90) and the engine/hand-written ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pulses", type=int, default=60)
    parser.add_argument("--postgres", metavar="DSN", help="also measure on PostgreSQL")
    parser.add_argument("--profile", action="store_true",
                        help="profile the engine's pulses and print the top costs")
    args = parser.parse_args()
    kinds = ["sqlite", "memory", *(["postgres"] if args.postgres else [])]
    print(f"meta_user, {args.pulses} pulses per side, ms median / p90")
    print(f"{'backend':<9} {'side':<13} {'wall':>15} {'model':>15} {'engine':>15}  ratio")
    for kind in kinds:
        profile = cProfile.Profile() if args.profile and kind == "sqlite" else None
        with tempfile.TemporaryDirectory() as tmp:
            sea_side, hand_side = asyncio.run(
                bench(kind, args.pulses, Path(tmp), args.postgres, profile))
        ratio = statistics.median(sea_side.wall) / statistics.median(hand_side.wall)
        for name, sample in (("engine", sea_side), ("hand-written", hand_side)):
            print(f"{kind:<9} {name:<13} {_ms(sample.wall):>15} {_ms(sample.model):>15} "
                  f"{_ms(sample.engine()):>15}  {ratio if name == 'engine' else 1:.2f}x")
        if profile is not None:
            print("\ntop costs of the engine's pulses (sqlite), by own time:")
            stats = pstats.Stats(profile)
            stats.sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
