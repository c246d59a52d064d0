"""Per-pulse budgets of model calls (calls, tokens in and out, cost): exceeding one is a
routable SEA566 error naming the budget, and what a pulse spent survives an approval wait
and a resume by another runtime, like the step count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.limits import Limits
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.budget import Budget, Meter, Spent, add_spent
from sea.llm.errors import BudgetExceeded
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions
from sea.llm.prices import Price, PriceTable

PLAYBOOKS: dict[str, dict[str, Any]] = {
    "thinker": {
        "name": "thinker", "description": "Thinks once.", "output_schema": ["thought"],
        "start_node": "think",
        "nodes": [{"id": "think", "type": "llm", "context_profile": "worker",
                   "action": "Think.", "output_key": "thought"}],
    },
    "budgeted": {
        "name": "budgeted", "description": "Thinks, waits for approval, thinks again.",
        "output_schema": ["thought", "second", "outcome"],
        "start_node": "first",
        "nodes": [
            {"id": "first", "type": "subplay", "playbook": "thinker", "next": "send"},
            {"id": "send", "type": "tool", "action": "send_mail", "args": {"to": "ken"},
             "next": "second"},
            {"id": "second", "type": "llm", "context_profile": "worker", "action": "Again.",
             "output_key": "second", "error_next": "over", "next": "done"},
            {"id": "done", "type": "set", "assignments": {"outcome": "within budget"}},
            {"id": "over", "type": "set",
             "assignments": {"outcome": "{error.code}: {error.message}"}},
        ],
    },
    "planner": {
        "name": "planner", "description": "Plans a mail (approved by a person), then thinks.",
        "output_schema": ["outcome"],
        "start_node": "act",
        "nodes": [
            {"id": "act", "type": "actions", "action": "Mail Ken.",
             "available_tools": ["send_mail"], "next": "after"},
            {"id": "after", "type": "llm", "context_profile": "worker", "action": "Done?",
             "error_next": "over", "next": "fine"},
            {"id": "fine", "type": "set", "assignments": {"outcome": "within budget"}},
            {"id": "over", "type": "set", "assignments": {"outcome": "{error.message}"}},
        ],
    },
    "chatty": {
        "name": "chatty", "description": "Thinks three times.",
        "output_schema": ["outcome"],
        "start_node": "a",
        "nodes": [
            {"id": "a", "type": "llm", "context_profile": "worker", "action": "One.",
             "next": "b"},
            {"id": "b", "type": "llm", "context_profile": "worker", "action": "Two.",
             "next": "c"},
            {"id": "c", "type": "llm", "context_profile": "worker", "action": "Three.",
             "error_next": "over"},
            {"id": "over", "type": "set", "assignments": {"outcome": "{error.message}"}},
        ],
    },
}


@tool
def send_mail(to: str) -> str:
    """Send a mail."""
    return f"sent to {to}"


@pytest.fixture
def library(tmp_path: Path) -> PlaybookLibrary:
    folder = tmp_path / "playbooks"
    folder.mkdir()
    for name, document in PLAYBOOKS.items():
        (folder / f"{name}.json").write_text(json.dumps(document), encoding="utf-8")
    return PlaybookLibrary([folder])


PERSONA = Persona("aiko", "Aiko", "You are Aiko.")


def runtime(store: SQLiteStore, library: PlaybookLibrary, tmp_path: Path, budget: Budget,
            answers: list[Any], **kwargs: Any) -> Runtime:
    model = ScriptedChatModel(default=answers)
    limits = Limits(budget=budget, approval_tools=frozenset({"send_mail"}))
    return Runtime(RuntimeConfig(store, ModelSet.single(model), tools=[send_mail], library=library,
                   limits=limits, checkpoint_path=tmp_path / "checkpoints.sqlite", **kwargs))


def test_the_call_budget_holds_across_an_approval_wait_and_a_resume(
    store: SQLiteStore, library: PlaybookLibrary, tmp_path: Path
) -> None:
    budget = Budget(max_calls=1)
    with runtime(store, library, tmp_path, budget, ["first thought"]) as first:
        waiting = first.run_pulse(PERSONA, "budgeted", "go")
    assert waiting.status == "waiting"
    with runtime(store, library, tmp_path, budget, ["never used"]) as second:
        done = second.run_resume(waiting.pulse_id, True)  # a fresh runtime: its meter is new
    assert done.status == "ok", done.error
    outcome = done.outputs["outcome"]
    assert outcome.startswith("SEA566: budget max_calls exceeded: the pulse has made 1 model")
    assert done.outputs["thought"] == "first thought" and done.outputs["second"] is None
    assert [c.node for c in done.llm_calls] == []  # the refused call was never made


PLAN = {"actions": [{"action_id": "mail", "tool": "send_mail", "parameters": {"to": "ken"}}],
        "reason": "asked to"}


def test_a_plan_made_before_the_wait_still_counts_after_the_resume(
    store: SQLiteStore, library: PlaybookLibrary, tmp_path: Path
) -> None:
    with runtime(store, library, tmp_path, Budget(max_calls=1), [PLAN]) as first:
        waiting = first.run_pulse(PERSONA, "planner", "go")
    assert waiting.status == "waiting" and waiting.approval is not None
    assert waiting.approval["spent"]["calls"] == 1  # the plan's call, carried by the request
    with runtime(store, library, tmp_path, Budget(max_calls=1), ["never used"]) as second:
        done = second.run_resume(waiting.pulse_id, True)
    assert done.status == "ok", done.error
    assert "budget max_calls exceeded" in done.outputs["outcome"]
    with runtime(store, library, tmp_path, Budget(max_calls=2), [PLAN]) as third:
        again = third.run_pulse(PERSONA, "planner", "go")
    with runtime(store, library, tmp_path, Budget(max_calls=2), ["yes"]) as fourth:
        assert fourth.run_resume(again.pulse_id, True).outputs["outcome"] == "within budget"


def test_with_room_left_the_resumed_pulse_goes_on(
    store: SQLiteStore, library: PlaybookLibrary, tmp_path: Path
) -> None:
    budget = Budget(max_calls=2)
    with runtime(store, library, tmp_path, budget, ["first"]) as first:
        waiting = first.run_pulse(PERSONA, "budgeted", "go")
    with runtime(store, library, tmp_path, budget, ["second"]) as second:
        done = second.run_resume(waiting.pulse_id, True)
    assert done.outputs["outcome"] == "within budget" and done.outputs["second"] == "second"


@pytest.mark.parametrize(
    ("budget", "named"),
    [(Budget(max_calls=2), "max_calls"), (Budget(max_tokens_in=40), "max_tokens_in"),
     (Budget(max_tokens_out=7), "max_tokens_out"), (Budget(max_cost=0.000_05), "max_cost")],
)
def test_each_budget_stops_the_pulse_naming_itself(
    store: SQLiteStore, library: PlaybookLibrary, tmp_path: Path, budget: Budget, named: str
) -> None:
    prices = LLMOptions(prices=PriceTable(default=Price(1.0, 1.0)))
    answers = ["one answer", "two answer", "three answer"]

    class Priced(ScriptedChatModel):
        @property
        def _llm_type(self) -> str:
            return "priced"  # not a model of the host: it costs what the table says

    model = Priced(default=answers)
    rt = Runtime(RuntimeConfig(store, ModelSet.single(model), library=library, llm=prices,
                 limits=Limits(budget=budget), checkpoint_path=tmp_path / "c.sqlite"))
    with rt:
        result = rt.run_pulse(PERSONA, "chatty", "go")
    assert result.status == "ok", result.error
    assert f"budget {named} exceeded" in result.outputs["outcome"]
    assert f"Limits.budget.{named}" in result.outputs["outcome"]


def test_an_unrouted_budget_error_fails_the_pulse_with_its_code(
    store: SQLiteStore, library: PlaybookLibrary, tmp_path: Path
) -> None:
    with runtime(store, library, tmp_path, Budget(max_calls=0), ["x"]) as rt:
        result = rt.run_pulse(PERSONA, "thinker", "go")
    assert result.status == "error" and result.error is not None
    assert result.error["code"] == "SEA566" and result.error["node"] == "think"
    assert "max_calls" in result.error["message"]


def test_the_meter_and_the_state_channel() -> None:
    meter = Meter(Budget(max_calls=2, max_tokens_out=10))
    start = meter.sync({"calls": 1, "tokens_in": 5, "tokens_out": 4, "cost": 0.5})
    meter.before_call()
    meter.add(3, 7, 0.25)
    assert meter.since(start) == Spent(1, 3, 7, 0.25)
    with pytest.raises(BudgetExceeded) as passed:
        meter.after_call()
    assert passed.value.budget == "max_tokens_out" and passed.value.code == "SEA566"
    with pytest.raises(BudgetExceeded, match="max_calls"):
        meter.before_call()
    assert add_spent({"calls": 1, "cost": 0.5}, {"calls": 2, "tokens_in": 3}) == {
        "calls": 3, "cost": 0.5, "tokens_in": 3}
    free = Meter(Budget(max_cost=0))
    free.add(10, 10, 0.0)
    free.before_call()  # a cost budget of 0 still allows calls that cost nothing
    with pytest.raises(UsageError):
        Budget(max_calls=-1)
    with pytest.raises(UsageError):
        Budget(max_cost=float("inf"))
