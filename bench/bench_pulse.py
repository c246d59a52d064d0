"""Real pulses as a host sees them: bundled playbooks on a scripted model, each against the
same pulse written by hand as one LangGraph program over the same store and model.

Three pulses (``--playbooks``, all three by default):

* ``meta_user``: the engine routes (``sub_router_user``: list the playbooks, read the plan
  memory, ask the model for a structured decision), takes ``basic_chat`` and speaks
  (``sub_speak``: a streamed reply, stored).
* ``meta_agentic``: the router chooses ``memory_recall`` (``query: garden``); the choice is
  stored as the persona's call, the memory is searched (the ``memory_search`` tool, five
  hits at most) and the notes are stored as the playbook's result (both seen only in this
  pulse); the router, asked again, sees them and chooses ``basic_chat``; the persona speaks.
  Two routings, one search, three writes besides the input.
* ``sub_act``: ``meta_user`` routes to ``sub_act``, whose ``actions`` node asks the model
  for a plan of four tool calls over a workspace of two small files: ``list_files``,
  ``read_file`` of ``topic.txt`` (its text is ``harvest``), then ``search_files`` and
  ``memory_search`` whose ``query`` is ``ref:topic`` (fitted to the file's text); the
  outcomes are stored as one memo and the persona speaks.

Each hand-written program does the same work directly, in a LangGraph graph compiled once,
with the same checkpointer used the same way (written when the pulse ends, then removed): it
stores the input, reads the history, reads the same two tool results before each routing,
asks the same model for the same structured answers (validated against the same JSON
Schemas: the router's, and the plan schema the engine builds from the four tools, made
once), calls the same tools (the workspace tools and the persona's ``memory_search``, with
the resolved arguments), stores the same memos with the same roles and tags, streams the
reply and stores it, and stores the same call records (one for each model and tool call,
as the engine keeps them for ``sea stats``; at the end of the pulse, in one write; the run
checks that every side stored the same ones). What it leaves out is the engine's
generality: no prompt rendering or context profiles (the history and a short instruction),
no events, no per-call argument checks or ref fitting beyond taking the text a ``ref:``
names.

The engine runs three ways: as a host gets it (``engine``: a pulse that keeps no
checkpoints runs each playbook that cannot pause for a person without a LangGraph run of its
own, and its own playbook so until a node that may pause is about to run,
:mod:`sea.engine.direct`); with every playbook in a graph of its own (``engine graphs``: a
runtime with ``keep_checkpoints``, which writes its checkpoints when each graph ends, as the
hand-written program does); and as a worker runs a pulse (``engine worker``: the same
runtime, the pulse started with ``recover=True`` and a pulse id, so it saves a checkpoint
after every step, reads the uids the pulse stored, stores its writes under uids of the
pulse, and has its checkpoints removed when it ends, ``Runtime.aforget``).

The hand-written program runs two ways: as described above (``hand-written``), and with a
worker's durability (``hand durable``): it asks the saver whether the pulse has a
checkpoint to go on from, reads the uids the pulse stored, stores the input and every memo
under a uid of the pulse (unless stored), saves a checkpoint after every step (LangGraph's
``sync`` durability: a process that dies goes on from its last step, and a finished model
call is not made again) and removes the checkpoints at the end. Each engine side's wall
time is printed over both programs' (median over median, p90 over p90); the worker's pulse
is the one to read against ``hand durable``.

Runs alternate between the sides so machine noise hits all alike. All sides assert
that their pulse took the scripted route (the engine's: status ``ok``, no failure handled by
an ``error_next``, the spoken reply, the memos written, every action ``ok`` with its refs
fitted by ``string.content``; the hand-written one: the decisions, the search hits and
matches, the reply), so a failing route is never measured.

The model time of a pulse is the time spent inside the scripted model (its answers and
chunks); the rest of the wall time is the engine's (or, for the hand-written program, the
program's own). Pulses rotate over eight personas, each with two earlier messages (about
the garden and the harvest, so the searches find something), so each persona's history
stays within the default budget and no short-term memory summary is asked for (the
hand-written programs do not summarize). With ``--profile``, a second run of each pulse on
``sqlite``, after the table (the profiler slows what it watches), profiles the worker's
pulses and lists where the time goes.

Backends: ``sqlite`` (SQLite store, SQLite checkpoints), ``memory`` (SQLite store,
checkpoints in memory) and, with ``--postgres DSN``, ``postgres`` (store and checkpoints in
PostgreSQL; the DSN's database gets the tables: the checkpoints in its default schema, each
side's store in schema ``bench_<pulse>_<side>``, dropped and made anew for each run).

With ``--otel`` (the ``otel`` extra), a table of its own after the first: the cost of
tracing, the engine's pulses on ``sqlite`` without telemetry, with telemetry on
OpenTelemetry's no-op providers, with the SDK keeping every span, and the SDK alone making
one traced pulse's spans and metric points after an untraced pulse (:mod:`otel_sides`).

With ``--cache``, two tables of their own (:mod:`cache_sides`): the stable prefix of each
model call of one pulse of each playbook (one prefix a pulse, byte for byte, or the run
fails), and the same pulse twice sharing a response cache, the second without a model call.

Run: ``PYTHONPATH=. python bench/bench_pulse.py [--pulses 60] [--playbooks meta_user,sub_act]
[--postgres DSN] [--profile] [--otel] [--cache]``.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import cProfile
import json
import pstats
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from figures import P90_SAMPLES, median_p90  # run as a script from bench/
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import PrivateAttr

from saimemory import MessageStore, NewMessage, Persona
from saimemory.calls import CallKind, CallRecord
from sea.chat.scripted import ScriptedChatModel
from sea.engine.actions.catalogue import ToolSpec
from sea.engine.actions.plan import plan_schema
from sea.engine.actions.prompt import actions_prompt
from sea.engine.pulse import write_uid
from sea.engine.tools.box import Signature
from sea.engine.tools.builtin import builtin_tools
from sea.engine.tools.plan_memory import plan_memory
from sea.engine.tools.ranking import rank_playbooks_tool
from sea.engine.tools.workspace import workspace_tools
from sea.host.config import RuntimeConfig
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.lang.jsonschemas import validator
from sea.lang.library import PlaybookLibrary
from sea.llm.base import base_prompt
from sea.llm.models import ModelSet

PLAYBOOKS = ("meta_user", "meta_agentic", "sub_act")
PERSONAS = [Persona(f"p{i}", f"Aoi{i}", "You are Aoi, a warm and curious companion.")
            for i in range(8)]
EARLIER = (("user", "The tomatoes in my garden are nearly ripe."),
           ("assistant", "Lovely! And the harvest festival is next week, too."))
"""Each persona's conversation before the first pulse (what the searches find)."""

DECISION = {"playbook": "basic_chat", "reason": "a greeting needs no lookup"}
REPLY = "Hello! It is good to hear from you again; how was the walk?"

ANSWERED = {"playbook": "basic_chat", "reason": "the recall answers it"}
AGENTIC_REPLY = "You told me the tomatoes in your garden were nearly ripe; are they ready?"
MAX_STEPS = 3
"""``meta_agentic``'s default bound on the playbooks a pulse runs."""

ACT = {"playbook": "sub_act", "reason": "needs a file"}
WORKSPACE = {"topic.txt": "harvest",
             "garden.md": "# Garden\nTomatoes: harvest in August.\nBeans: water daily.\n"}
ACT_TOOLS = ("list_files", "read_file", "search_files", "memory_search")
"""The tools ``sub_act``'s ``actions`` node offers, in its order."""
PLAN = {"actions": [
    {"action_id": "ls", "tool": "list_files", "parameters": {"path": "."}},
    {"action_id": "topic", "tool": "read_file", "parameters": {"path": "topic.txt"}},
    {"action_id": "find", "tool": "search_files", "parameters": {"query": "ref:topic"}},
    {"action_id": "recall", "tool": "memory_search",
     "parameters": {"query": "ref:topic", "tags": ["conversation"], "limit": 3}},
], "reason": "read the topic, then look for it in the files and in memory"}
ACT_REPLY = "The harvest is in August, garden.md says; and you mentioned the harvest festival."
ACT_TASK = ('The user asked: "{task}"\nPlan the tool calls that find what is needed to '
            "answer. Use the file names the user gave.")
"""``sub_act``'s ``act`` node's action, ``{task}`` the user's message."""


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


def timed_model(script: dict[str, list[Any]]) -> TimedModel:
    return TimedModel(responses=script)


def _script(playbook: str, pulses: int) -> dict[str, list[Any]]:
    """The scripted answers of ``pulses`` pulses of ``playbook`` (per ``playbook.node``)."""
    if playbook == "meta_user":
        return {"sub_router_user.decide": [DECISION] * pulses,
                "sub_speak.compose": [REPLY] * pulses}
    if playbook == "meta_agentic":
        return {"sub_router_user.decide": [ANSWERED] * pulses,  # the prior chose the recall
                "sub_speak.compose": [AGENTIC_REPLY] * pulses}
    return {"sub_router_user.decide": [ACT] * pulses, "sub_act.act": [PLAN] * pulses,
            "sub_speak.compose": [ACT_REPLY] * pulses}


def _text(playbook: str, i: int) -> str:
    """The user's message of pulse ``i``."""
    if playbook == "meta_agentic":
        return f"Do you remember what I told you about my garden? (message {i})"
    if playbook == "sub_act":
        return f"Read topic.txt and find that topic in my files and in what I said. ({i})"
    return f"Hello again, it is message {i}."


# -- the engine's side: what each pulse must have done ----------------------------------------


def _spoke(result: PulseResult, reply: str) -> None:
    assert result.status == "ok", result.error
    assert not result.handled_errors, result.handled_errors  # no error_next taken
    assert result.spoken == [reply], result.spoken


def _check_meta_user(result: PulseResult) -> None:
    _spoke(result, REPLY)


def _check_meta_agentic(result: PulseResult) -> None:
    _spoke(result, AGENTIC_REPLY)
    assert result.outputs["step_count"] == 1 and result.outputs["recall_hits"], result.outputs
    written = [(w.playbook, w.node) for w in result.memory_writes]
    assert written == [(None, None), ("meta_agentic", "record"), ("memory_recall", "save"),
                       ("sub_speak", "compose")], written


def _check_sub_act(result: PulseResult) -> None:
    _spoke(result, ACT_REPLY)
    outcomes = result.outputs["act_outcomes"]
    assert [(o["action_id"], o["status"]) for o in outcomes] == [
        (a["action_id"], "ok") for a in PLAN["actions"]], outcomes
    assert outcomes[2]["result"]["matches"] and outcomes[3]["result"], outcomes
    rules = [(o["action_id"], n["rule"]) for o in outcomes for n in o["normalized"]]
    assert rules == [("find", "string.content"), ("recall", "string.content")], rules
    written = [(w.playbook, w.node) for w in result.memory_writes]
    assert written == [(None, None), ("sub_act", "save"), ("sub_speak", "compose")], written


CHECKS: dict[str, Callable[[PulseResult], None]] = {
    "meta_user": _check_meta_user, "meta_agentic": _check_meta_agentic,
    "sub_act": _check_sub_act}


# -- the hand-written side ---------------------------------------------------------------------


class _HandState(TypedDict, total=False):
    persona: str
    pulse_id: str
    text: str
    decision: dict[str, Any]
    steps: int
    reply: str


def _json(value: Any) -> str:
    """Compact JSON text, keys sorted (how the engine's memos render values)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


Node = Callable[[_HandState], Awaitable[_HandState]]


class Hand:
    """What the hand-written programs share: the store, the model, and the route and speak
    steps (``sub_router_user`` and ``sub_speak`` done directly)."""

    def __init__(self, store: MessageStore, model: ScriptedChatModel,
                 library: PlaybookLibrary, saver: BaseCheckpointSaver[Any],
                 durable: bool = False) -> None:
        self.store, self.model, self.library, self.saver = store, model, library, saver
        self.durable = durable
        """A worker's durability: a checkpoint after every step (LangGraph's ``sync``), each
        write under a uid of the pulse, written once (see :meth:`pulse`)."""
        self.stored: dict[str, frozenset[str]] = {}
        """A durable pulse's uids stored before it (re)started."""
        router = library.get("sub_router_user")
        schema = next(n.response_schema for n in router.nodes  # type: ignore[attr-defined]
                      if n.id == "decide")
        self.schema: dict[str, Any] = dict(schema)
        self.check = validator(schema)
        self.rank = rank_playbooks_tool(library)
        self.by_id = {p.id: p for p in PERSONAS}
        self.memory_search = {  # the persona's own tool, as the engine makes it for a pulse
            p.id: next(t for t in builtin_tools(store=store, persona_id=p.id, library=library)
                       if t.name == "memory_search") for p in PERSONAS}
        self.calls: dict[str, list[CallRecord]] = {}
        """Each pulse's call records, stored when it ends."""

    def note(self, state: _HandState, kind: CallKind, name: str, playbook: str, node: str,
             started: float) -> None:
        """Keep the record of a call that started at ``started`` (``perf_counter``), as the
        engine keeps one of each model and tool call (``sea stats``)."""
        self.calls.setdefault(state["pulse_id"], []).append(CallRecord(
            persona=state["persona"], kind=kind, name=name, outcome="ok",
            pulse_id=state["pulse_id"], playbook=playbook, node=node,
            latency_s=time.perf_counter() - started))

    def context(self, persona: Persona, pulse_id: str) -> list[BaseMessage]:
        messages: list[BaseMessage] = [SystemMessage(persona.system_prompt)]
        for m in self.store.history(persona.id, pulse_id=pulse_id):
            messages.append(AIMessage(m.content) if m.role == "assistant"
                            else HumanMessage(m.content))
        return messages

    async def remember(self, state: _HandState, role: str, content: str,
                       tags: tuple[str, ...], playbook: str, node: str) -> None:
        """Store a message of the pulse as the engine's memorize does (its role, tags and
        provenance; the engine's own words marked as such); a durable pulse's under a uid
        of the pulse, unless an earlier start of it stored it."""
        uid = None
        if self.durable:
            uid = write_uid(state["pulse_id"], f"{playbook}.{node}.{state.get('steps', 0)}")
            if uid in self.stored[state["pulse_id"]]:
                return
        await asyncio.to_thread(self.store.append, NewMessage(
            persona=state["persona"], role=role, content=content,  # type: ignore[arg-type]
            tags=tags, metadata={} if role == "assistant" else {"engine_memo": True},
            pulse_id=state["pulse_id"], playbook=playbook, node=node, uid=uid))

    async def route(self, state: _HandState) -> _HandState:
        """``sub_router_user``: the lexical prior first; only when it leaves more than one
        candidate, the plan note and the model's choice among them (the enum narrowed)."""
        persona = self.by_id[state["persona"]]
        started = time.perf_counter()
        ranking = await self.rank.ainvoke({"query": state["text"],
                                           "keep_fallback": state.get("steps", 0) > 0})
        self.note(state, "tool", "rank_playbooks", "sub_router_user", "rank", started)
        if ranking["decided"]:
            return {"decision": {"playbook": ranking["best"], "args": {},
                                 "reason": "the only likely playbook"}}

        def gather() -> list[BaseMessage]:
            started = time.perf_counter()
            plans = plan_memory(self.store.current_plan(persona.id))
            self.note(state, "tool", "plan_memory", "sub_router_user", "plan", started)
            messages = self.context(persona, state["pulse_id"])
            listing = "\n".join(f"- {c['name']}: {c['description']}"
                                for c in ranking["listing"])
            messages.append(HumanMessage(f"Pick the playbook for {state['text']!r}.\n"
                                         f"The likeliest, best first:\n{listing}\n"
                                         + plans["note"]))
            return messages

        messages = await asyncio.to_thread(gather)
        schema = copy.deepcopy(self.schema)
        schema["properties"]["playbook"]["enum"] = list(ranking["candidates"])
        started = time.perf_counter()
        answer = await self.model.with_structured_output(schema, include_raw=True).ainvoke(
            messages, config={"metadata": {"sea_playbook": "sub_router_user",
                                           "sea_node": "decide"}})
        self.note(state, "model", "scripted", "sub_router_user", "decide", started)
        decision = answer["parsed"]
        assert self.check.is_valid(decision), decision
        assert decision["playbook"] in ranking["candidates"], (decision, ranking)
        return {"decision": decision}

    async def speak(self, state: _HandState) -> _HandState:
        persona = self.by_id[state["persona"]]
        messages = await asyncio.to_thread(self.context, persona, state["pulse_id"])
        started = time.perf_counter()
        parts = [str(chunk.content) async for chunk in self.model.astream(messages, config={
            "metadata": {"sea_playbook": "sub_speak", "sea_node": "compose"}})]
        self.note(state, "model", "scripted", "sub_speak", "compose", started)
        reply = "".join(parts)
        await self.remember(state, "assistant", reply, ("conversation",), "sub_speak",
                            "compose")
        return {"reply": reply}

    def pulse(self, graph: CompiledStateGraph[Any], reply: str
              ) -> Callable[[Persona, str], Awaitable[None]]:
        """A pulse of ``graph``: store the input, run the graph, check the reply, store its
        call records, remove the checkpoints.

        A durable one (:attr:`durable`) is what a worker's pulse promises, done directly:
        it asks the saver whether the pulse has a checkpoint (one that has goes on from it:
        ``ainvoke(None)``) and reads the uids the pulse stored (a crash may come after a
        write and before the step's checkpoint), stores the input and each memo under a
        uid of the pulse unless already stored, and saves a checkpoint after every step
        (``sync``), so a finished model call is not made again after a crash."""

        async def run(persona: Persona, text: str) -> None:
            pulse_id = uuid.uuid4().hex
            config: Any = {"configurable": {"thread_id": pulse_id}}
            payload: Any = {"persona": persona.id, "pulse_id": pulse_id, "text": text}
            uid = None
            if self.durable:
                if await self.saver.aget_tuple(config) is not None:
                    payload = None  # not on this bench's pulses: each starts anew
                self.stored[pulse_id] = frozenset(m.uid for m in await asyncio.to_thread(
                    self.store.pulse_messages, persona.id, pulse_id))
                uid = write_uid(pulse_id, "input")
            if uid is None or uid not in self.stored[pulse_id]:
                await asyncio.to_thread(self.store.append, NewMessage(
                    persona=persona.id, role="user", content=text, tags=("conversation",),
                    pulse_id=pulse_id, uid=uid))
            final = await graph.ainvoke(payload, config,
                                        durability="sync" if self.durable else "exit")
            assert final["reply"] == reply, final
            await asyncio.to_thread(self.store.record_calls, self.calls.pop(pulse_id))
            self.stored.pop(pulse_id, None)
            await self.saver.adelete_thread(pulse_id)

        return run

    def compile(self, nodes: dict[str, Node], edges: list[tuple[str, Any]]
                ) -> CompiledStateGraph[Any]:
        """A graph of ``nodes`` starting at ``route``; an edge's target is a node or a
        function of the state naming one."""
        builder = StateGraph(_HandState)
        for name, node in nodes.items():
            builder.add_node(name, node)
        builder.add_edge(START, "route")
        for source, target in edges:
            if callable(target):
                builder.add_conditional_edges(source, target, [*nodes, END])
            else:
                builder.add_edge(source, target)
        return builder.compile(checkpointer=self.saver)


def hand_meta_user(hand: Hand, workspace: Path | None) -> Callable[[Persona, str], Awaitable[None]]:
    """``meta_user`` by hand: store the input, decide, speak, store the reply."""
    graph = hand.compile({"route": hand.route, "speak": hand.speak},
                         [("route", lambda s: "speak"), ("speak", END)])
    return hand.pulse(graph, REPLY)


def hand_meta_agentic(hand: Hand, workspace: Path | None
                      ) -> Callable[[Persona, str], Awaitable[None]]:
    """``meta_agentic`` by hand: decide; while the decision is a playbook, store the call,
    recall from memory, store the notes and decide again; then speak."""

    async def call(state: _HandState) -> _HandState:
        decision = state["decision"]
        assert decision["playbook"] == "memory_recall", decision
        args = decision.get("args") or {}
        called = {"playbook": decision["playbook"], "args": args, "reason": decision["reason"]}
        await hand.remember(state, "assistant", "Calling a playbook: " + _json(called),
                            ("meta_agentic", "playbook_call"), "meta_agentic", "record")
        query = args.get("query") or state["text"]
        started = time.perf_counter()
        hits = await hand.memory_search[state["persona"]].ainvoke(
            {"query": query, "match": "any", "limit": 5, "tags": ["conversation"]},
            config={"metadata": {"sea_playbook": "memory_recall", "sea_node": "search",
                                 "sea_pulse_id": state["pulse_id"]}})
        hand.note(state, "tool", "memory_search", "memory_recall", "search", started)
        assert hits, query
        notes = [("The user said: " if h["role"] == "user" else "You said: ") + h["content"]
                 for h in hits]
        await hand.remember(
            state, "user", f'<system>Memory recall for "{query}" (for you only): '
            f"{_json(notes)}</system>", ("memory_recall", "playbook_result"), "memory_recall",
            "save")
        return {"steps": state.get("steps", 0) + 1}

    def after_route(state: _HandState) -> str:
        return "speak" if state["decision"]["playbook"] == "basic_chat" else "call"

    def after_call(state: _HandState) -> str:
        return "speak" if state["steps"] >= MAX_STEPS else "route"

    graph = hand.compile({"route": hand.route, "call": call, "speak": hand.speak},
                         [("route", after_route), ("call", after_call), ("speak", END)])
    return hand.pulse(graph, AGENTIC_REPLY)


def hand_sub_act(hand: Hand, workspace: Path | None) -> Callable[[Persona, str], Awaitable[None]]:
    """``meta_user`` routing to ``sub_act`` by hand: decide, ask for the plan (the plan
    schema and prompt the engine makes for the four tools, made once), run its actions with
    each ``ref:`` replaced by the file text it names, store the outcomes, speak."""
    assert workspace is not None
    tools: dict[str, BaseTool] = {t.name: t for t in workspace_tools(workspace)}
    offered = [*tools.values(), hand.memory_search[PERSONAS[0].id]]
    catalogue = [ToolSpec(t.name, (t.description or "").strip(), Signature.of(t).schema)
                 for name in ACT_TOOLS for t in offered if t.name == name]
    schema = plan_schema(catalogue, 4)
    check = validator(schema)
    mark = "\x00"
    prompt = actions_prompt(mark, catalogue, 4)
    plan_model = hand.model.with_structured_output(schema, include_raw=True)

    async def act(state: _HandState) -> _HandState:
        persona, pulse_id = hand.by_id[state["persona"]], state["pulse_id"]
        task = ACT_TASK.format(task=state["text"])
        messages = [SystemMessage(persona.system_prompt),
                    HumanMessage(prompt.replace(mark, task))]
        started = time.perf_counter()
        answer = await plan_model.ainvoke(messages, config={"metadata": {
            "sea_playbook": "sub_act", "sea_node": "act"}})
        hand.note(state, "model", "scripted", "sub_act", "act", started)
        plan = answer["parsed"]
        assert check.is_valid(plan), plan
        metadata = {"sea_playbook": "sub_act", "sea_node": "act", "sea_pulse_id": pulse_id}
        results: dict[str, Any] = {}
        notes = []
        for action in plan["actions"]:
            args = {name: results[value[4:]]["content"]  # an earlier read_file's text
                    if isinstance(value, str) and value.startswith("ref:") else value
                    for name, value in action["parameters"].items()}
            tool = (hand.memory_search[persona.id] if action["tool"] == "memory_search"
                    else tools[action["tool"]])
            started = time.perf_counter()
            result = await tool.ainvoke(args, config={"metadata": metadata})
            hand.note(state, "tool", action["tool"], "sub_act", "act", started)
            results[action["action_id"]] = result
            notes.append({"action": action["action_id"], "tool": action["tool"],
                          "result": result})
        assert results["find"]["matches"] and results["recall"], results
        await hand.remember(
            state, "user", f'<system>Tool results for "{state["text"]}" (for you only; the '
            f"user has not seen them): {_json(notes)}</system>", ("sub_act", "playbook_result"),
            "sub_act", "save")
        return {}

    def after_route(state: _HandState) -> str:
        assert state["decision"]["playbook"] == "sub_act", state["decision"]
        return "act"

    graph = hand.compile({"route": hand.route, "act": act, "speak": hand.speak},
                         [("route", after_route), ("act", "speak"), ("speak", END)])
    return hand.pulse(graph, ACT_REPLY)


Pulse = Callable[[Persona, str], Awaitable[None]]
HAND_PROGRAMS: dict[str, Callable[[Hand, Path | None], Pulse]] = {
    "meta_user": hand_meta_user, "meta_agentic": hand_meta_agentic, "sub_act": hand_sub_act}


# -- the run --------------------------------------------------------------------------------


async def _saver(kind: str, workdir: Path, dsn: str | None, stack: AsyncExitStack,
                 name: str = "hand") -> BaseCheckpointSaver[Any]:
    if kind == "memory":
        return InMemorySaver()
    if kind == "sqlite":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        return await stack.enter_async_context(
            AsyncSqliteSaver.from_conn_string(str(workdir / f"{name}.checkpoints.sqlite")))
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    saver = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(str(dsn)))
    await saver.setup()
    return saver


def _store(kind: str, workdir: Path, playbook: str, side: str, dsn: str | None) -> MessageStore:
    if kind == "postgres":
        import psycopg
        from psycopg import sql

        from saimemory.postgres import PostgresStore

        schema = f"bench_{playbook}_{side}"
        with psycopg.connect(str(dsn), autocommit=True) as conn:  # a fresh store each run
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(schema)))
        return PostgresStore(str(dsn), schema=schema)
    from saimemory.sqlite import SQLiteStore

    return SQLiteStore(workdir / f"{side}.sqlite")


def _seed(store: MessageStore) -> None:
    for persona in PERSONAS:
        for role, content in EARLIER:
            store.append(NewMessage(persona=persona.id, role=role,  # type: ignore[arg-type]
                                    content=content, tags=("conversation",)))


def _workspace(workdir: Path) -> Path:
    root = workdir / "workspace"
    root.mkdir()
    for name, text in WORKSPACE.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


class Sample:
    """Wall and model seconds of each measured pulse of one side."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.model: list[float] = []

    def engine(self) -> list[float]:
        return [w - m for w, m in zip(self.wall, self.model, strict=True)]


def _ms(values: list[float]) -> str:
    median, slow = median_p90(values)
    return f"{median * 1e3:6.1f} / {slow * 1e3:6.1f}"


@dataclass(frozen=True, slots=True)
class Setup:
    """One run: the pulse, the backend and where it keeps its files."""

    playbook: str
    kind: str
    pulses: int
    workdir: Path
    dsn: str | None


async def _alternate(sides: list[Side], playbook: str, count: int, warm: int,
                     profiled: tuple[cProfile.Profile, Side] | None) -> None:
    """``count`` pulses of each side, alternated, the first ``warm`` not measured."""
    for i in range(count):
        persona = PERSONAS[i % len(PERSONAS)]
        for side in sides:
            spent, started = side.model.spent, time.perf_counter()
            profile = profiled[0] if profiled is not None and profiled[1] is side \
                and i >= warm else None
            if profile is not None:
                profile.enable()
            await side.run(persona, _text(playbook, i))
            if profile is not None:
                profile.disable()
            if i >= warm:
                side.sample.wall.append(time.perf_counter() - started)
                side.sample.model.append(side.model.spent - spent)


@dataclass(slots=True)
class Side:
    """One side of the run: how a pulse of it runs, its model and its samples."""

    run: Callable[[Persona, str], Awaitable[None]]
    model: TimedModel
    sample: Sample


async def bench(setup: Setup, profile: cProfile.Profile | None) -> list[Sample]:
    """The samples of alternated pulses of one playbook on one backend, one per side of
    :data:`SIDES` (profiled: the worker's pulses)."""
    warm = 8
    playbook, kind, workdir, dsn = setup.playbook, setup.kind, setup.workdir, setup.dsn
    library = PlaybookLibrary.bundled([])
    count = setup.pulses + warm
    models = [timed_model(_script(playbook, count)) for _ in SIDES]
    stores = [_store(kind, workdir, playbook, side, dsn)
              for side in ("engine", "graphs", "worker", "hand", "handsync")]
    for store in stores:
        _seed(store)
    workspace = _workspace(workdir) if playbook == "sub_act" else None

    def runtime(i: int, keep: bool) -> Runtime:
        saver = InMemorySaver() if kind == "memory" else None
        path = None if saver is not None else dsn if kind == "postgres" \
            else workdir / f"checkpoints{i}.sqlite"
        model = models[i]
        return Runtime(RuntimeConfig(stores[i], ModelSet(normal=model, lightweight=model),
                                     library=library, workspace=workspace,
                                     keep_checkpoints=keep, checkpoint_path=path),
                       checkpointer=saver)

    runtimes = [runtime(0, False), runtime(1, True), runtime(2, True)]
    top = "meta_user" if playbook == "sub_act" else playbook
    check = CHECKS[playbook]
    async with AsyncExitStack() as stack:
        hand = HAND_PROGRAMS[playbook](
            Hand(stores[3], models[3], library, await _saver(kind, workdir, dsn, stack)),
            workspace)
        durable = HAND_PROGRAMS[playbook](
            Hand(stores[4], models[4], library,
                 await _saver(kind, workdir, dsn, stack, "durable"), durable=True), workspace)

        async def engine_pulse(persona: Persona, text: str) -> None:
            check(await runtimes[0].arun_pulse(persona, top, text))

        async def graph_pulse(persona: Persona, text: str) -> None:
            check(await runtimes[1].arun_pulse(persona, top, text))

        async def worker_pulse(persona: Persona, text: str) -> None:
            """As a worker runs a pulse: recoverable, then its checkpoints removed."""
            pulse_id = uuid.uuid4().hex
            check(await runtimes[2].arun_pulse(persona, top, text, pulse_id=pulse_id,
                                               recover=True))
            await runtimes[2].aforget(pulse_id)

        sides = [Side(run, model, Sample()) for run, model in zip(
            (engine_pulse, graph_pulse, worker_pulse, hand, durable), models, strict=True)]
        await _alternate(sides, playbook, count, warm, None if profile is None
                         else (profile, sides[2]))
    for each in runtimes:
        await each.aclose()
        each.close()
    calls = [Counter((r.kind, r.name, r.playbook, r.node) for r in store.call_records())
             for store in stores]
    assert all(c == calls[0] for c in calls), calls  # the same call records on every side
    for store in stores:
        drop = getattr(store, "drop_schema", None)  # a PostgreSQL store's schema of this run
        if drop is not None:
            drop()
        store.close()
    return [side.sample for side in sides]


SIDES = ("engine", "engine graphs", "engine worker", "hand-written", "hand durable")
"""The sides, as printed: the engine as a host gets it; the engine with every playbook in a
graph of its own (a runtime that keeps checkpoints, writing them as each graph ends); the
engine as a worker runs a pulse (recoverable: a checkpoint after every step, then removed);
the hand-written program (checkpoints written when it ends); and the hand-written program
with a worker's durability (a checkpoint after every step, writes under uids)."""


def _ratio(sample: Sample, baseline: Sample) -> str:
    """``sample``'s wall time over ``baseline``'s: of the medians, of the p90s."""
    (median, slow), (base, base_slow) = median_p90(sample.wall), median_p90(baseline.wall)
    return f"{median / base:.2f}x {slow / base_slow:.2f}x"


def main() -> None:
    """Print per-pulse times (median / p90) and their ratios to both hand-written programs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pulses", type=int, default=60)
    parser.add_argument("--playbooks", default=",".join(PLAYBOOKS),
                        help=f"comma-separated pulses to run, of {', '.join(PLAYBOOKS)}")
    parser.add_argument("--postgres", metavar="DSN", help="also measure on PostgreSQL")
    parser.add_argument("--otel", action="store_true",
                        help="then the cost of tracing: untraced, otel off, otel on, SDK alone "
                        "(sqlite)")
    parser.add_argument("--cache", action="store_true",
                        help="then the stable prompt prefix of each call, and a pulse asked "
                        "twice with a response cache (sqlite)")
    parser.add_argument("--profile", action="store_true",
                        help="then profile the worker's pulses (sqlite, a run of their own) "
                        "and print the top costs")
    args = parser.parse_args()
    playbooks = [name.strip() for name in args.playbooks.split(",") if name.strip()]
    unknown = sorted(set(playbooks) - set(PLAYBOOKS))
    if unknown or not playbooks:
        parser.error(f"--playbooks takes names of {', '.join(PLAYBOOKS)} (got {unknown})")
    if args.pulses < P90_SAMPLES:
        parser.error(f"--pulses is at least {P90_SAMPLES} (for a p90)")
    kinds = ["sqlite", "memory", *(["postgres"] if args.postgres else [])]
    print(f"{args.pulses} pulses per side, ms median / p90")
    print(f"{'pulse':<13} {'backend':<9} {'side':<13} {'wall':>15} {'model':>15} "
          f"{'engine':>15}  {'/ hand-written':<14}  / hand durable (wall, median p90)")
    for playbook in playbooks:
        for kind in kinds:
            with tempfile.TemporaryDirectory() as tmp:
                samples = asyncio.run(bench(
                    Setup(playbook, kind, args.pulses, Path(tmp), args.postgres), None))
            hand, durable = samples[3], samples[4]
            for name, sample in zip(SIDES, samples, strict=True):
                print(f"{playbook:<13} {kind:<9} {name:<13} {_ms(sample.wall):>15} "
                      f"{_ms(sample.model):>15} {_ms(sample.engine()):>15}  "
                      f"{_ratio(sample, hand)}  {_ratio(sample, durable)}", flush=True)
    if args.otel:
        _otel(playbooks, args.pulses)
    if args.cache:
        _cache(playbooks)
    for playbook in playbooks if args.profile else ():  # a run of its own: the profiler
        profile = cProfile.Profile()                     # slows what it watches
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(bench(Setup(playbook, "sqlite", args.pulses, Path(tmp), None), profile))
        print(f"\ntop costs of the engine's worker {playbook} pulses (sqlite), by own time:")
        stats = pstats.Stats(profile)
        stats.sort_stats("tottime").print_stats(15)


def _cache(playbooks: list[str]) -> None:
    """The stable prefix and the response cache (:mod:`cache_sides`), on sqlite."""
    import cache_sides

    def store_of(workdir: Path) -> MessageStore:
        store = _store("sqlite", workdir, "cache", "engine", None)
        _seed(store)
        store.pin(PERSONAS[0].id, "The user grows tomatoes and beans.")  # pins: in the prefix
        return store

    def workspace_of(workdir: Path, playbook: str) -> Path | None:
        if playbook != "sub_act":
            return None
        shared = workdir.parent / "workspace"  # one workspace: its paths are in the context
        return shared if shared.is_dir() else _workspace(workdir.parent)

    def pulse(runtime: Runtime, playbook: str) -> PulseResult:
        top = "meta_user" if playbook == "sub_act" else playbook
        result = runtime.run_pulse(PERSONAS[0], top, _text(playbook, 0))
        CHECKS[playbook](result)
        return result

    with tempfile.TemporaryDirectory() as tmp:
        cache_sides.report(playbooks, cache_sides.runtime_maker(store_of, workspace_of), pulse,
                           lambda playbook: _script(playbook, 1), Path(tmp),
                           base_prompt(PERSONAS[0]))


def _otel(playbooks: list[str], pulses: int) -> None:
    """The cost of tracing (:mod:`otel_sides`): each playbook's engine pulses on sqlite."""
    import otel_sides

    print(f"\nthe cost of tracing, {pulses} pulses per side, ms median / p90 (sqlite)")
    print(f"{'pulse':<13} {'side':<9} {'wall':>15} {'engine':>15}  cost")
    library = PlaybookLibrary.bundled([])
    for playbook in playbooks:
        top = "meta_user" if playbook == "sub_act" else playbook

        def make(telemetry: Any, workdir: Path, playbook: str = playbook) -> Runtime:
            store = _store("sqlite", workdir, playbook, "engine", None)
            _seed(store)
            model = timed_model(_script(playbook, pulses + 8))
            workspace = _workspace(workdir) if playbook == "sub_act" else None
            return Runtime(RuntimeConfig(
                store, ModelSet(normal=model, lightweight=model), library=library,
                workspace=workspace, checkpoint_path=workdir / "checkpoints.sqlite",
                telemetry=telemetry))

        async def pulse(runtime: Runtime, i: int, playbook: str = playbook,
                        top: str = top) -> None:
            persona = PERSONAS[i % len(PERSONAS)]
            CHECKS[playbook](await runtime.arun_pulse(persona, top, _text(playbook, i)))

        def spent(runtime: Runtime) -> float:
            model = runtime.config.models.normal
            assert isinstance(model, TimedModel)
            return model.spent

        with tempfile.TemporaryDirectory() as tmp:
            times = asyncio.run(otel_sides.compare(make, pulse, spent, Path(tmp), pulses))
        otel_sides.report(playbook, times)


if __name__ == "__main__":
    main()
