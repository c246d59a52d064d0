"""Failure paths: error_next routing with `error` in state, or a pulse error naming the node."""

from __future__ import annotations

import pytest
from langchain_core.tools import tool

from saimemory.records import Persona
from sea.engine.events import ErrorRaised, NodeEnded
from tests.engine.conftest import MakeRuntime


@tool
def explode(why: str) -> str:
    """Always fails."""
    raise RuntimeError(f"boom: {why}")


FAILURES = {
    # node (and input) → code, and what the message must say about the cause
    "unknown_tool": ("SEA530", "unknown tool 'no_such_tool' (available tools: "),
    "raising_tool": ("SEA532", "tool 'explode' failed: RuntimeError: boom: raising_tool"),
    "failing_model": ("SEA522", "no response left for node 'fails_{routing}.failing_model'"),
    "failing_callee": (
        "SEA532",
        "playbook 'tool_raises' failed: tool_raises.call: tool 'explode' failed: "
        "RuntimeError: boom: failing_callee",
    ),
}


@pytest.mark.parametrize("node", list(FAILURES))
def test_failure_routes_to_error_next_with_the_error_in_state(
    make_runtime: MakeRuntime, persona: Persona, node: str
) -> None:
    code, cause = FAILURES[node]
    runtime, _ = make_runtime(tools=[explode])
    result = runtime.run_pulse(persona, "fails_routed", node)
    assert result.status == "ok", result.error
    assert result.outputs["handled"] == f"{code}:{node}"
    caught = result.outputs["caught"]
    assert (caught["code"], caught["node"], caught["playbook"]) == (code, node, "fails_routed")
    assert cause.format(routing="routed") in caught["message"]
    assert result.outputs["last_value"] == node  # never "None" or "Tool error" in last
    assert result.outputs["reached"] is None  # the failed node's `next` was not taken
    [raised] = [e for e in result.events if isinstance(e, ErrorRaised) and e.node == node]
    assert raised.routed and raised.error == caught
    assert result.handled_errors == [{"playbook": "fails_routed", "node": node, **caught}]
    [ended] = [e for e in result.events if isinstance(e, NodeEnded) and e.node == node]
    assert ended.outcome == "error"


@pytest.mark.parametrize("node", list(FAILURES))
def test_failure_without_error_next_fails_the_pulse_naming_playbook_node_and_cause(
    make_runtime: MakeRuntime, persona: Persona, node: str
) -> None:
    code, cause = FAILURES[node]
    runtime, _ = make_runtime(tools=[explode])
    result = runtime.run_pulse(persona, "fails_unrouted", node)
    assert result.status == "error"
    assert result.error is not None
    assert (result.error["code"], result.error["playbook"], result.error["node"]) == (
        code,
        "fails_unrouted",
        node,
    )
    assert cause.format(routing="unrouted") in result.error["message"]
    assert result.outputs["reached"] is None
    [raised] = [e for e in result.events if isinstance(e, ErrorRaised) and e.node == node]
    assert not raised.routed
    [ended] = [e for e in result.events if isinstance(e, NodeEnded) and e.node == node]
    assert ended.outcome == "failed"


# "gather" exists but is not on the node's allow-list; static checks reject unknown names
# in allowed_playbooks, so at run time an unknown name is one that is not allowed either
@pytest.mark.parametrize("target", ["gather", "no_such_playbook"])
def test_exec_of_a_playbook_not_allowed_takes_error_next(
    make_runtime: MakeRuntime, persona: Persona, target: str
) -> None:
    runtime, _ = make_runtime()
    denied = runtime.run_pulse(persona, "exec_allowed", target)
    assert denied.status == "ok", denied.error
    assert denied.outputs["result"] == "failed"
    assert denied.outputs["error"]["code"] == "SEA571"
    expected = f"playbook {target!r} may not be run here (allowed: echo_topic)"
    assert expected in denied.outputs["error"]["message"]
    allowed = runtime.run_pulse(persona, "exec_allowed", "echo_topic")
    assert allowed.outputs["result"] == "topic=fixed depth=1"


def test_missing_required_input_is_a_clear_error(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "echo_topic", "")
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "SEA570"
    assert "required argument 'topic' is missing" in result.error["message"]
    assert result.error["playbook"] == "echo_topic"  # the host learns which playbook refused


def test_approval_denied_routes_to_error_next(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    from sea.engine.limits import Limits
    from tests.engine.test_runtime import send_mail

    limits = Limits(approval_tools=frozenset({"send_mail"}))
    runtime, _ = make_runtime(tools=[send_mail], limits=limits)
    waiting = runtime.run_pulse(persona, "approval_tool", "eve")
    assert waiting.status == "waiting"
    result = runtime.run_resume(waiting.pulse_id, "no")
    assert result.status == "ok", result.error
    assert result.outputs["outcome"] == "denied: SEA575"


class _Opaque:
    pass


@tool
def add(a: int, b: int) -> object:
    """Returns something that is not JSON data."""
    return _Opaque()


def test_tool_result_that_is_not_json_fails_the_node(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime(tools=[add])
    result = runtime.run_pulse(persona, "tools_main", "")
    assert result.status == "error"
    assert result.error is not None
    assert (result.error["code"], result.error["node"]) == ("SEA550", "t1")
    assert "tool 'add' returned _Opaque data that is not JSON" in result.error["message"]


def test_expression_error_fails_the_node_never_zero(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "bad_math", "abc")
    assert result.status == "error"
    assert result.error is not None
    assert (result.error["playbook"], result.error["node"]) == ("bad_math", "calc")
    assert "n" not in result.outputs


def test_store_refusing_a_write_fails_the_pulse_naming_the_node(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "memorize_refused", "x")
    assert result.status == "error"
    assert result.error is not None
    assert result.error["code"] == "SEA540"
    assert (result.error["playbook"], result.error["node"]) == ("memorize_refused", "save")
    assert "MEM001" in result.error["message"] and "whitespace" in result.error["message"]
