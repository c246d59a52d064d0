"""Action dispatch overhead per action: an ``actions`` node vs the same calls in one LangGraph node.

Both sides make the same N tool calls in the same process, runs alternating so machine
noise hits both alike:

* **SEA**: a playbook of one ``actions`` node, run through :class:`sea.host.runtime.Runtime`
  as a host would (a temporary SQLite store, an in-memory checkpointer, a scripted model
  answering the plan). The plan chains the tools with ``ref:`` parameters, so refs are
  resolved and normalized as in real pipelines (``string.content`` into a text parameter,
  ``array.wrap`` into a ``list[dict]`` one, ``id.key`` into an ``x-sea-ref`` id one).
* **Baseline**: one hand-written LangGraph node that calls ``ainvoke`` on the same tools
  with the already-resolved arguments, looking earlier results up by hand
  (``results["a0"]["content"]``, ``[results["a1"]]``): what the dispatcher saves an author
  from writing.

What is measured, per pulse (one sample per run):

* SEA: the wall time of :meth:`Dispatcher.run <sea.engine.actions.dispatch.Dispatcher.run>`
  inside the real pulse (the method is wrapped for the run), i.e. everything the dispatcher
  does from the accepted plan to the last outcome: ``action_start``/``ref_resolved``/
  ``action_end``/``tool_call`` events, ref resolution and normalization, the type guard,
  the tool box's argument check, the tool call, the result's JSON round trip. The plan's
  model call, the ``actions_planned`` event, graph steps and checkpoints are outside it.
  The other candidate measures are less honest: timestamps taken in the event consumer see
  the events when the host's queue delivers them, not when they happen; and
  ``action_end.duration_s - tool_call.duration_s`` would drop the tool box's argument
  check and schema lookup (inside ``tool_call``'s time, yet SEA's work, not the tool's) as
  well as the events' cost.
* Baseline: the wall time of the node's loop over the N calls (the graph's own step is
  outside it, as SEA's is).
* **The tools' own time** is subtracted on both sides: every tool body adds its own
  ``perf_counter`` span to a clock, read before and after the measured span. What remains
  on the baseline side is the price of calling a langchain-core tool (its callback and
  argument-parsing machinery) plus the hand lookups; on the SEA side the same plus
  everything the dispatcher adds. The ratio is SEA / baseline, per action, of the medians.

The table also splits SEA's time with its own events: ``tool_call`` is the median of
``tool_call.duration_s`` per action (the tool box's schema lookup and argument check, then
the call), ``rest`` that of ``action_end.duration_s`` minus it (refs, the type guard, the
events and the result's JSON round trip); ``SEA extra`` is SEA minus the baseline.

The tools are coroutines by default (a synchronous tool runs in a worker thread, a hop of
tens of microseconds and much jitter that would hit both sides alike); ``--sync-tools``
measures that case.

Run: ``PYTHONPATH=. python bench/bench_actions.py [--actions 4 8 16 32] [--pulses 100]
[--quick] [--sync-tools] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from time import perf_counter
from typing import Any, TypedDict
from unittest import mock

import orjson
from bench_engine import OneLibrary  # the same library port (run as a script from bench/)
from figures import P90_SAMPLES, p90
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.actions.dispatch import Dispatcher, Outcome
from sea.engine.actions.plan import PlannedAction
from sea.engine.events import ActionEnded, ToolCalled
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.models import Playbook
from sea.llm.models import ModelSet

PLAYBOOK = "actions_bench"
NODE = "act"
MAX_ACTIONS = 32
WARMUP = 3
RULES = {"draft": "string.content", "collect": "array.wrap", "tasks": "id.key"}
"""The normalization each tool's ref'd parameter gets in the plan."""


# -- the tools -------------------------------------------------------------------------------


class ToolClock:
    """The time spent inside the tools' bodies (their own time), summed."""

    total = 0.0


class _Fetch(BaseModel):
    path: str = Field(description="The note to read.")
    max_chars: int = Field(default=2000, description="The most characters to return.")


class _Draft(BaseModel):
    prompt_override: str = Field(max_length=4000, description="The text to draft from.")
    style: str = Field(default="plain", description="How the draft reads.")


class _Collect(BaseModel):
    action_results: list[dict[str, Any]] = Field(description="Results to gather.")
    note: str = Field(default="", description="A note for the summary.")


class _Tasks(BaseModel):
    step_id: str = Field(
        description="The step to break into tasks.",
        json_schema_extra={"x-sea-ref": ["step_id", "first_step_id"]},
    )
    limit: int = Field(default=5, description="The most tasks.")


def _fetch(path: str, max_chars: int = 2000) -> dict[str, Any]:
    started = perf_counter()
    text = f"# {path}\n" + "A line of notes about the garden and the plans for it.\n" * 8
    result = {"content": text[:max_chars], "total_chars": len(text), "truncated": False}
    ToolClock.total += perf_counter() - started
    return result


def _draft(prompt_override: str, style: str = "plain") -> dict[str, Any]:
    started = perf_counter()
    result = {"response": f"{style} draft of {len(prompt_override)} characters"}
    ToolClock.total += perf_counter() - started
    return result


def _collect(action_results: list[dict[str, Any]], note: str = "") -> dict[str, Any]:
    started = perf_counter()
    result = {
        "content": f"{len(action_results)} result(s) {note}".strip(),
        "count": len(action_results),
        "first_step_id": f"step-{len(note)}",
    }
    ToolClock.total += perf_counter() - started
    return result


def _tasks(step_id: str, limit: int = 5) -> dict[str, Any]:
    started = perf_counter()
    result = {"content": f"tasks of {step_id}", "tasks": [f"{step_id}.{i}" for i in range(limit)]}
    ToolClock.total += perf_counter() - started
    return result


async def _afetch(path: str, max_chars: int = 2000) -> dict[str, Any]:
    return _fetch(path, max_chars)


async def _adraft(prompt_override: str, style: str = "plain") -> dict[str, Any]:
    return _draft(prompt_override, style)


async def _acollect(action_results: list[dict[str, Any]], note: str = "") -> dict[str, Any]:
    return _collect(action_results, note)


async def _atasks(step_id: str, limit: int = 5) -> dict[str, Any]:
    return _tasks(step_id, limit)


def make_tools(sync: bool) -> dict[str, BaseTool]:
    """The four tools by name: coroutines, or (``sync``) functions run in a worker thread."""
    specs: list[tuple[str, str, type[BaseModel], Callable[..., Any], Callable[..., Any]]] = [
        (
            "fetch",
            "Read a note; returns {content, total_chars, truncated}.",
            _Fetch,
            _fetch,
            _afetch,
        ),
        ("draft", "Draft a text from a prompt; returns {response}.", _Draft, _draft, _adraft),
        (
            "collect",
            "Gather earlier results; returns {content, count, first_step_id}.",
            _Collect,
            _collect,
            _acollect,
        ),
        ("tasks", "Break a step into tasks; returns {content, tasks}.", _Tasks, _tasks, _atasks),
    ]
    tools: dict[str, BaseTool] = {}
    for name, description, schema, func, coroutine in specs:
        tools[name] = StructuredTool.from_function(
            func=func if sync else None,
            coroutine=None if sync else coroutine,
            name=name,
            description=description,
            args_schema=schema,
        )
    return tools


# -- the plan, and the same calls by hand ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One action: its id, tool, literal arguments, and the parameter fed by a ref."""

    action_id: str
    tool: str
    literal: dict[str, Any]
    ref_param: str | None = None
    ref: str | None = None


def steps(n: int) -> list[Step]:
    """``n`` actions cycling fetch → draft(ref fetch) → collect(ref draft) → tasks(ref collect).

    Three actions in four take a ref, one of each kind of rule: a file's ``content`` into a
    text parameter (``string.content``), a dict into a ``list[dict]`` parameter
    (``array.wrap``), an id picked by ``x-sea-ref`` from a result (``id.key``).
    """
    out: list[Step] = []
    for i in range(n):
        prev = f"a{i - 1}"
        match i % 4:
            case 0:
                out.append(Step(f"a{i}", "fetch", {"path": f"notes-{i}.md"}))
            case 1:
                out.append(Step(f"a{i}", "draft", {"style": "short"}, "prompt_override", prev))
            case 2:
                out.append(Step(f"a{i}", "collect", {"note": "so far"}, "action_results", prev))
            case _:
                out.append(Step(f"a{i}", "tasks", {"limit": 3}, "step_id", prev))
    return out


def plan_of(plan_steps: Sequence[Step]) -> dict[str, Any]:
    """The plan the scripted model answers."""
    actions = []
    for step in plan_steps:
        parameters = dict(step.literal)
        if step.ref_param is not None:
            parameters[step.ref_param] = f"ref:{step.ref}"
        actions.append({"action_id": step.action_id, "tool": step.tool, "parameters": parameters})
    return {"actions": actions, "reason": "benchmark pipeline"}


def _by_hand(step: Step, results: dict[str, Any]) -> dict[str, Any]:
    """The arguments of ``step``, the ref looked up and fitted by hand."""
    args = dict(step.literal)
    if step.ref is not None:
        earlier = results[step.ref]
        if step.ref_param == "action_results":
            args["action_results"] = [earlier]
        elif step.ref_param == "step_id":
            args["step_id"] = earlier.get("step_id") or earlier["first_step_id"]
        else:
            args["prompt_override"] = earlier["content"]
    return args


class _HandState(TypedDict):
    results: list[Any]


@dataclass(slots=True)
class Sample:
    """One measured run: span seconds, tool-body seconds within it, actions run."""

    span: float
    tools: float
    actions: int

    @property
    def per_action(self) -> float:
        """Seconds per action, the tools' own time excluded."""
        return (self.span - self.tools) / self.actions


def hand_graph(
    tools: dict[str, BaseTool], plan_steps: Sequence[Step], samples: list[Sample]
) -> Any:
    """One LangGraph node that makes the plan's calls itself, timing its loop."""

    async def work(state: _HandState) -> dict[str, Any]:
        before = ToolClock.total
        started = perf_counter()
        results: dict[str, Any] = {}
        for step in plan_steps:
            results[step.action_id] = await tools[step.tool].ainvoke(_by_hand(step, results))
        span = perf_counter() - started
        samples.append(Sample(span, ToolClock.total - before, len(plan_steps)))
        return {"results": list(results.values())}

    builder = StateGraph(_HandState)
    builder.add_node("work", work)
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    return builder.compile(checkpointer=InMemorySaver())


# -- SEA ----------------------------------------------------------------------------------


def actions_playbook() -> bytes:
    """One ``actions`` node offering the four tools."""
    return orjson.dumps(
        {
            "name": PLAYBOOK,
            "description": "benchmark of the action dispatcher",
            "output_schema": ["outcomes"],
            "start_node": NODE,
            "nodes": [
                {
                    "id": NODE,
                    "type": "actions",
                    "action": "Work on the notes: {input}",
                    "available_tools": ["fetch", "draft", "collect", "tasks"],
                    "max_actions": MAX_ACTIONS,
                    "output_key": "outcomes",
                }
            ],
        }
    )


@contextmanager
def timed_dispatch(samples: list[Sample]) -> Iterator[None]:
    """``Dispatcher.run`` timed (span and tool-body time) for as long as the block runs."""
    original = Dispatcher.run

    async def run(self: Dispatcher, actions: Sequence[PlannedAction]) -> list[Outcome]:
        before = ToolClock.total
        started = perf_counter()
        outcomes = await original(self, actions)
        span = perf_counter() - started
        samples.append(Sample(span, ToolClock.total - before, len(actions)))
        return outcomes

    with mock.patch.object(Dispatcher, "run", run):
        yield


# -- driving -------------------------------------------------------------------------------


@dataclass
class Row:
    """One plan size's figures (µs per action, the tools' own time excluded)."""

    actions: int
    pulses: int
    sea_us: float
    sea_p90_us: float
    baseline_us: float
    baseline_p90_us: float
    ratio: float
    extra_us: float
    """SEA minus baseline: what the dispatcher adds per action."""
    sea_tool_call_us: float
    """Median of SEA's ``tool_call.duration_s`` per action (tool box check + call)."""
    sea_outside_action_us: float
    """Median of SEA's ``action_end.duration_s`` minus ``tool_call.duration_s`` per action."""
    tool_body_us: float
    """The tools' own time per action (subtracted from both sides)."""


async def _alternate(
    pulses: int, first: Callable[[int], Awaitable[None]], second: Callable[[int], Awaitable[None]]
) -> None:
    for i in range(-WARMUP, 0):  # warm-up: compilation, caches, connections
        await first(i)
        await second(i)
    for i in range(pulses):
        await first(i)
        await second(i)


async def bench(n: int, pulses: int, sync_tools: bool, workdir: Path) -> Row:
    """Median and p90 per action of SEA's dispatcher and of the hand-written node."""
    tools = make_tools(sync_tools)
    plan_steps = steps(n)
    plan = plan_of(plan_steps)
    source = actions_playbook()
    playbook = Playbook.model_validate_json(source)
    model = ScriptedChatModel(responses={f"{PLAYBOOK}.{NODE}": [plan] * (pulses + WARMUP)})
    store = SQLiteStore(workdir / f"memory-{n}.sqlite")
    persona = Persona("bench", "Bench")
    runtime = Runtime(RuntimeConfig(
        store,
        ModelSet.single(model),
        tools=list(tools.values()),
        library=OneLibrary(playbook, source),
    ), checkpointer=InMemorySaver())
    sea_samples: list[Sample] = []
    hand_samples: list[Sample] = []
    breakdown: list[tuple[float, float]] = []
    graph = hand_graph(tools, plan_steps, hand_samples)
    expected: list[Any] = []
    rules = [RULES[s.tool] for s in plan_steps if s.ref is not None]

    async def sea(i: int) -> None:
        result = await runtime.arun_pulse(persona, PLAYBOOK, "", pulse_id=f"s{n}-{i}")
        assert result.status == "ok", result.error
        outcomes = result.outputs["outcomes"]
        assert [o["status"] for o in outcomes] == ["ok"] * n, outcomes
        assert [o["result"] for o in outcomes] == expected, "SEA and the baseline differ"
        assert [n["rule"] for o in outcomes for n in o["normalized"]] == rules, outcomes
        calls = sum(e.duration_s for e in result.events if isinstance(e, ToolCalled))
        ends = sum(e.duration_s for e in result.events if isinstance(e, ActionEnded))
        if i >= 0:
            breakdown.append((calls / n, (ends - calls) / n))

    async def hand(i: int) -> None:
        config = {"configurable": {"thread_id": f"h{n}-{i}"}}
        final = await graph.ainvoke({"results": []}, config)
        if not expected:
            expected.extend(orjson.loads(orjson.dumps(final["results"])))

    try:
        await hand(-WARMUP - 1)  # the expected results, before SEA's first run
        hand_samples.clear()
        with timed_dispatch(sea_samples):
            await _alternate(pulses, sea, hand)
    finally:
        runtime.close()
        store.close()
    sea_per = [s.per_action for s in sea_samples[WARMUP:]]
    hand_per = [s.per_action for s in hand_samples[WARMUP:]]
    tool_per = [s.tools / s.actions for s in sea_samples[WARMUP:] + hand_samples[WARMUP:]]
    sea_med, hand_med = statistics.median(sea_per), statistics.median(hand_per)
    return Row(
        actions=n,
        pulses=len(sea_per),
        sea_us=sea_med * 1e6,
        sea_p90_us=p90(sea_per) * 1e6,
        baseline_us=hand_med * 1e6,
        baseline_p90_us=p90(hand_per) * 1e6,
        ratio=sea_med / hand_med,
        extra_us=(sea_med - hand_med) * 1e6,
        sea_tool_call_us=statistics.median(b[0] for b in breakdown) * 1e6,
        sea_outside_action_us=statistics.median(b[1] for b in breakdown) * 1e6,
        tool_body_us=statistics.median(tool_per) * 1e6,
    )


def _print_table(rows: Sequence[Row], sync_tools: bool) -> None:
    kind = "synchronous (worker thread)" if sync_tools else "coroutine"
    print(f"Per action, tools' own time excluded ({kind} tools); median [p90] µs")
    print(
        f"{'N':>3}  {'SEA dispatcher':>18}  {'hand-written node':>18}  {'ratio':>6}  "
        f"{'SEA extra':>9}  {'tool_call':>9}  {'rest':>6}  {'tool body':>9}"
    )
    for r in rows:
        sea = f"{r.sea_us:.0f} [{r.sea_p90_us:.0f}]"
        hand = f"{r.baseline_us:.0f} [{r.baseline_p90_us:.0f}]"
        print(
            f"{r.actions:>3}  {sea:>18}  {hand:>18}  {r.ratio:>5.2f}x  {r.extra_us:>9.0f}  "
            f"{r.sea_tool_call_us:>9.0f}  {r.sea_outside_action_us:>6.0f}  "
            f"{r.tool_body_us:>9.1f}"
        )
    print(
        "tool_call: SEA's tool_call.duration_s (tool box argument check + the call); "
        "rest: action_end.duration_s minus it (refs, type guard, events)"
    )


def main() -> None:
    """Print (or ``--json``) per-action times and the SEA / hand-written ratio per plan size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--actions",
        type=int,
        nargs="+",
        default=[4, 8, 16, 32],
        help=f"plan sizes (1 to {MAX_ACTIONS}; default: 4 8 16 32)",
    )
    parser.add_argument("--pulses", type=int, default=100, help="measured runs per side and size")
    parser.add_argument("--quick", action="store_true",
                        help=f"a short run: {P90_SAMPLES} pulses, N 4 and 16")
    parser.add_argument(
        "--sync-tools",
        action="store_true",
        help="synchronous tools (run in a worker thread, like the built-in ones)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    sizes: list[int] = [4, 16] if args.quick else args.actions
    pulses: int = P90_SAMPLES if args.quick else args.pulses
    if any(not 1 <= n <= MAX_ACTIONS for n in sizes) or pulses < P90_SAMPLES:
        parser.error(f"plan sizes go from 1 to {MAX_ACTIONS}; --pulses is at least {P90_SAMPLES} "
                     "(for a p90)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            rows.append(asyncio.run(bench(n, pulses, args.sync_tools, Path(tmp))))
    if args.json:
        report = {
            "unit": "µs per action, tools' own time excluded",
            "sync_tools": args.sync_tools,
            "rows": [asdict(r) for r in rows],
        }
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        _print_table(rows, args.sync_tools)


if __name__ == "__main__":
    main()
