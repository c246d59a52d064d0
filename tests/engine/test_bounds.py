"""Bounds: a loop bound per node and a step budget per pulse, named in the error."""

from __future__ import annotations

from saimemory.records import Persona
from sea.engine.limits import Limits
from tests.engine.conftest import MakeRuntime


def test_visit_bound_names_the_loop(make_runtime: MakeRuntime, persona: Persona) -> None:
    runtime, _ = make_runtime(limits=Limits(max_visits=5))
    result = runtime.run_pulse(persona, "forever", "")
    assert result.status == "error"
    assert result.error is not None
    assert result.error["code"] == "SEA560"
    assert result.error["node"] == "inc"
    message = result.error["message"]
    assert "more than 5 times" in message and "inc×5" in message and "again×5" in message
    assert "recursion" not in message.lower()


def test_step_budget_names_budget_and_loop(make_runtime: MakeRuntime, persona: Persona) -> None:
    runtime, _ = make_runtime(limits=Limits(max_steps=7, max_visits=100))
    result = runtime.run_pulse(persona, "forever", "")
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "SEA560"
    assert "step budget of 7" in result.error["message"]
    assert "inc×4" in result.error["message"]


def test_step_budget_counts_nested_playbooks(make_runtime: MakeRuntime, persona: Persona) -> None:
    # nest_a.down → nest_b.down → echo_topic.echo, nest_b.note: 4 steps in all
    ok, _ = make_runtime(limits=Limits(max_steps=4))
    assert ok.run_pulse(persona, "nest_a", "").status == "ok"
    short, _ = make_runtime(limits=Limits(max_steps=3))
    result = short.run_pulse(persona, "nest_a", "")
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "SEA560"


def test_bound_inside_callee_is_not_routed(make_runtime: MakeRuntime, persona: Persona) -> None:
    runtime, _ = make_runtime(limits=Limits(max_visits=3))
    result = runtime.run_pulse(persona, "calls_forever", "")
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "SEA560"
    assert (result.error["playbook"], result.error["node"]) == ("forever", "inc")
    assert "handled" not in result.outputs


def test_routed_callee_failure_counts_the_callee_steps(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    # call, then runs_then_fails.first, .second, .calc (fails), then handle: 5 node runs
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "routes_callee_failure", "x")
    assert result.status == "ok", result.error
    assert result.usage["steps"] == 5


def test_routed_callee_failure_spends_the_step_budget(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    enough, _ = make_runtime(limits=Limits(max_steps=5))
    assert enough.run_pulse(persona, "routes_callee_failure", "x").status == "ok"
    short, _ = make_runtime(limits=Limits(max_steps=4))
    result = short.run_pulse(persona, "routes_callee_failure", "x")
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "SEA560"
    assert (result.error["playbook"], result.error["node"]) == ("routes_callee_failure", "handle")
    assert "step budget of 4" in result.error["message"]


def test_routed_exec_failure_counts_the_callee_steps(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    # pick, run, runs_then_fails.first, .second, .calc (fails), then handle: 6 node runs
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "exec_fails", "x")
    assert result.status == "ok", result.error
    assert result.usage["steps"] == 6
