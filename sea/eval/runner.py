"""Running eval cases: each attempt in a fresh temporary store seeded with the case's
persona, through the real :class:`~sea.host.runtime.Runtime`, judged from what its pulses
emitted.

Attempts run concurrently up to a bound; a model that is not thread-safe (the local model)
is given a bound of one by the caller.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from langchain_core.language_models import BaseChatModel

from saimemory import Persona
from saimemory.base import DEFAULT_BUDGET
from saimemory.records import NewMessage
from saimemory.sqlite import SQLiteStore
from sea.engine.events import Event, LLMCalled
from sea.engine.limits import Limits
from sea.engine.plans.service import PlanService
from sea.eval.cases import EvalCase
from sea.eval.expect import ROUTE_ONLY, Check, Observation, check_all, observe, route_decided
from sea.eval.judge import judge
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions

DEFAULT_PERSONA = Persona(
    id="aoi", name="Aoi",
    system_prompt=("You are Aoi, a warm and curious companion. You talk with the user in a "
                   "friendly, natural way and keep your answers short."),
)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One run of one case on one model."""

    case: str
    """The case's key (``set/id``)."""
    repeat: int
    checks: list[Check]
    observed: Observation
    latency_s: float
    """Wall time of the case's pulses (all its turns)."""
    error: str | None = None
    """Why the attempt could not run at all (the case's pulse errors are in ``observed``)."""

    @property
    def passed(self) -> bool:
        """Every judged expectation held (and the attempt ran)."""
        return self.error is None and all(c.passed is not False for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        """The attempt in a stored run."""
        return {
            "case": self.case, "repeat": self.repeat, "passed": self.passed,
            "latency_s": round(self.latency_s, 4), "tokens_in": self.observed.tokens_in,
            "tokens_out": self.observed.tokens_out, "cost": self.observed.cost,
            "checks": [c.to_json() for c in self.checks], "observed": self.observed.to_json(),
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class Setup:
    """What every attempt on one model runs with.

    Attributes:
        label: The model's name in reports (its spec).
        models: Makes the models of one attempt (a scripted model is made afresh for each,
            so each attempt reads its script from the start).
        library: The playbooks.
        limits: Bounds and approval policy.
        llm: How model calls are made (prices).
        judge: The model that judges rubrics (None: rubrics are not judged).
        concurrency: How many attempts may run at once.
    """

    label: str
    models: Callable[[], ModelSet]
    library: PlaybookLibrary
    limits: Limits = field(default_factory=Limits)
    llm: LLMOptions = field(default_factory=LLMOptions)
    judge: Callable[[], BaseChatModel] | None = None
    concurrency: int = 4


async def run_cases(
    setup: Setup, cases: Sequence[EvalCase], repeat: int,
    progress: Callable[[Attempt], None] | None = None,
) -> list[Attempt]:
    """Every case ``repeat`` times, at most ``setup.concurrency`` at once.

    Returns:
        The attempts, in case order then repeat order.
    """
    gate = asyncio.Semaphore(max(1, setup.concurrency))

    async def one(case: EvalCase, index: int) -> Attempt:
        async with gate:
            attempt = await run_case(setup, case, index)
        if progress is not None:
            progress(attempt)
        return attempt

    return list(await asyncio.gather(*(one(case, index) for case in cases
                                       for index in range(repeat))))


async def run_case(setup: Setup, case: EvalCase, index: int = 0) -> Attempt:
    """One attempt of ``case``: a fresh store and workspace, seeded, its turns run in order,
    its expectations judged on the last turn."""
    with TemporaryDirectory(prefix="sea-eval-") as tmp:
        root = Path(tmp)
        store = SQLiteStore(root / "memory.sqlite")
        try:
            persona = _persona(case.persona)
            workspace = _workspace(root, case.persona)
            _seed(store, persona.id, case.persona, workspace)
            runtime = Runtime(RuntimeConfig(
                store, setup.models(), library=setup.library,
                checkpoint_path=root / "checkpoints.sqlite", history_budget=DEFAULT_BUDGET,
                limits=setup.limits, llm=setup.llm, workspace=workspace,
            ))
            try:
                return await _turns(setup, runtime, persona, case, index)
            finally:
                await runtime.aclose()
        except Exception as exc:  # a case that cannot run is a failed attempt, not a crash
            return Attempt(case.key, index, [], Observation(), 0.0,
                           error=f"{type(exc).__name__}: {exc}")
        finally:
            store.close()


async def _turns(setup: Setup, runtime: Runtime, persona: Persona, case: EvalCase,
                 index: int) -> Attempt:
    started = time.monotonic()
    tokens_in = tokens_out = 0
    cost = 0.0
    seen = Observation()
    for number, text in enumerate(case.turns, 1):
        if number == len(case.turns) and case.expect and set(case.expect) <= ROUTE_ONLY \
                and _routes_by_exec(setup.library, case.playbook):
            events = await _until_routed(runtime, persona, case.playbook, text)
            seen = observe(events, {}, case.playbook)
            seen.route = route_decided(events, case.playbook)[1]
            seen.status = "cancelled"  # once routed, by the eval
        else:
            result = await runtime.arun_pulse(persona, case.playbook, text)
            events = result.events
            seen = observe(events, result.outputs, case.playbook)
        for event in events:
            if isinstance(event, LLMCalled):
                tokens_in += event.record.tokens_in
                tokens_out += event.record.tokens_out
                cost += event.record.cost
    seen.tokens_in, seen.tokens_out, seen.cost = tokens_in, tokens_out, cost
    latency = time.monotonic() - started
    checks = check_all(case.expect, seen)
    rubric = case.expect.get("rubric")
    if rubric is not None:
        if setup.judge is None:
            checks.append(Check("rubric", None, "not judged (no --judge)"))
        else:
            checks.append(await judge(setup.judge(), rubric, case.turns[-1], seen.reply))
    return Attempt(case.key, index, checks, seen, latency)


async def _until_routed(runtime: Runtime, persona: Persona, playbook: str,
                        text: str) -> list[Event]:
    """The events of a pulse up to the moment its route is known; the pulse is then
    cancelled (what it would do next does not matter to the case)."""
    events: list[Event] = []
    stream = runtime.astream_pulse(persona, playbook, text)
    try:
        async for event in stream:
            events.append(event)
            if route_decided(events, playbook)[0]:
                break
    finally:
        await stream.aclose()
    return events


def _routes_by_exec(library: PlaybookLibrary, name: str) -> bool:
    """Whether the entry playbook runs its router's choice with an ``exec`` node (as
    ``meta_user`` does): only then can its pulse be stopped once routed. A router playbook
    given as the entry (``sub_router_user``) runs to its end, its route its output."""
    return any(node.node_type() == "exec" for node in library.get(name).nodes)


def _persona(data: Mapping[str, Any]) -> Persona:
    pid = data.get("id", DEFAULT_PERSONA.id)
    name = data.get("name", DEFAULT_PERSONA.name if pid == DEFAULT_PERSONA.id else pid)
    prompt = data.get("system_prompt", DEFAULT_PERSONA.system_prompt.replace(
        DEFAULT_PERSONA.name, name))
    return Persona(pid, name, prompt)


def _workspace(root: Path, data: Mapping[str, Any]) -> Path | None:
    if not data.get("workspace", True) and not data.get("files") and not data.get("plan"):
        return None
    workspace = root / "workspace"
    workspace.mkdir()
    for relative, text in (data.get("files") or {}).items():
        target = (workspace / relative).resolve()
        if not target.is_relative_to(workspace.resolve()):
            raise ValueError(f"persona.files: {relative!r} is outside the workspace")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return workspace


def _seed(store: SQLiteStore, persona: str, data: Mapping[str, Any],
          workspace: Path | None) -> None:
    messages = [NewMessage(persona, m["role"], m["content"],
                           tags=tuple(m.get("tags") or ("conversation",)))
                for m in data.get("messages") or ()]
    if messages:
        store.append_many(messages)
    for text in data.get("pins") or ():
        store.pin(persona, text)
    plan = data.get("plan")
    if plan is not None and workspace is not None:
        service = PlanService(store, persona, workspace)
        proposed = service.propose(plan["title"], plan.get("content", ""), actor="user")
        if plan.get("specs"):
            report = service.set_action_specs(proposed.plan_id, plan["specs"], actor="user")
            if not report.ok:
                raise ValueError(f"persona.plan.specs: not valid: {report.issues[0]}")
