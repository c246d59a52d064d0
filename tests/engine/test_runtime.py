from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

from saimemory.records import Persona
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import NodeEnded, NodeStarted
from sea.engine.limits import Limits
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.llm.models import ModelSet
from tests.engine.conftest import PLAYBOOKS, MakeRuntime

sent: list[str] = []


@tool
def send_mail(to: str) -> str:
    """Send a mail."""
    sent.append(to)
    return f"mailed {to}"


def test_waiting_pulse_resumes_in_fresh_runtime(
    make_runtime: MakeRuntime, persona: Persona, tmp_path: Path
) -> None:
    limits = Limits(approval_tools=frozenset({"send_mail"}))
    first, _ = make_runtime(tools=[send_mail], limits=limits)
    result = first.run_pulse(persona, "approval_tool", "bob")
    assert result.status == "waiting", result.error
    assert result.approval is not None and result.approval["tool"] == "send_mail"
    second, _ = make_runtime(tools=[send_mail], limits=limits)
    assert "bob" not in sent  # nothing ran before the approval
    resumed = second.run_resume(result.pulse_id, True)
    assert resumed.status == "ok", resumed.error
    assert resumed.outputs["outcome"] == "sent"
    assert resumed.outputs["sent"] == "mailed bob"
    assert sent.count("bob") == 1


def test_a_denial_holds_when_the_resuming_runtime_would_not_have_asked(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    asks = Limits(approval_tools=frozenset({"send_mail"}))
    asking, _ = make_runtime(tools=[send_mail], limits=asks)
    waiting = asking.run_pulse(persona, "approval_tool", "carol")
    assert waiting.status == "waiting", waiting.error
    lenient, _ = make_runtime(tools=[send_mail])  # its own policy asks about nothing
    denied = lenient.run_resume(waiting.pulse_id, False)
    assert denied.status == "ok", denied.error
    assert denied.outputs["outcome"] == "denied: SEA575"
    assert "carol" not in sent


def test_resume_of_unknown_pulse_is_a_usage_error(make_runtime: MakeRuntime) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_resume("never-ran", True)
    assert result.status == "error"
    assert result.error is not None and "is not waiting" in result.error["message"]


def test_exec_of_unlisted_playbook_can_ask_for_approval(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    limits = Limits(unlisted_exec="ask")
    runtime, _ = make_runtime(limits=limits)
    waiting = runtime.run_pulse(persona, "exec_allowed", "gather", args={})
    assert waiting.status == "waiting"
    assert waiting.approval is not None and waiting.approval["playbook_name"] == "gather"
    fresh, _ = make_runtime(limits=limits)
    done = fresh.run_resume(waiting.pulse_id, {"approved": True})
    assert done.status == "ok", done.error
    assert done.outputs["error"] is None
    assert [w.playbook for w in done.memory_writes] == ["gather"]
    assert "Result of gather for fixed" in done.memory_writes[0].content


def test_events_pair_node_start_and_end_with_depth(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "nest_a", "")
    kinds = [e.kind for e in result.events]
    assert kinds[0] == "pulse_start" and kinds[-1] == "pulse_end"
    starts = [(e.playbook, e.node, e.depth) for e in result.events if isinstance(e, NodeStarted)]
    ends = [(e.playbook, e.node, e.depth) for e in result.events if isinstance(e, NodeEnded)]
    assert starts == [
        ("nest_a", "down", 0),
        ("nest_b", "down", 1),
        ("echo_topic", "echo", 2),
        ("nest_b", "note", 1),
    ]
    assert sorted(ends) == sorted(starts)
    assert all(e.duration_s >= 0 for e in result.events if isinstance(e, NodeEnded))
    assert all("kind" in e.to_json() for e in result.events)


def test_approval_inside_subplay_resumes_in_fresh_runtime(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    limits = Limits(approval_tools=frozenset({"send_mail"}))
    first, _ = make_runtime(tools=[send_mail], limits=limits)
    waiting = first.run_pulse(persona, "approval_nested", "carol")
    assert waiting.status == "waiting", waiting.error
    assert waiting.approval is not None
    assert (waiting.approval["playbook"], waiting.approval["node"]) == ("approval_tool", "send")
    second, _ = make_runtime(tools=[send_mail], limits=limits)
    done = second.run_resume(waiting.pulse_id, "approve")
    assert done.status == "ok", done.error
    assert done.outputs == {"outcome": "sent", "after": "saw sent"}
    assert sent.count("carol") == 1


def test_resume_of_a_finished_pulse_is_refused(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    for keep in (False, True):
        runtime, _ = make_runtime(keep_checkpoints=keep)
        done = runtime.run_pulse(persona, "counter_loop", "")
        assert done.status == "ok"
        again = runtime.run_resume(done.pulse_id, True)
        assert again.status == "error"
        assert again.error is not None and "is not waiting" in again.error["message"]


def test_checkpoints_of_ended_pulses_are_removed(
    make_runtime: MakeRuntime, persona: Persona, tmp_path: Path
) -> None:
    import sqlite3

    limits = Limits(approval_tools=frozenset({"send_mail"}))
    runtime, _ = make_runtime(tools=[send_mail], limits=limits)
    ended = runtime.run_pulse(persona, "counter_loop", "")
    waiting = runtime.run_pulse(persona, "approval_tool", "dan")
    assert (ended.status, waiting.status) == ("ok", "waiting")
    with sqlite3.connect(tmp_path / "checkpoints.sqlite") as db:
        threads = {row[0] for row in db.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert threads == {waiting.pulse_id}


def test_concurrent_pulses_share_graphs_but_not_state(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    import asyncio

    runtime, _ = make_runtime()

    async def both() -> list[Any]:
        return list(
            await asyncio.gather(
                runtime.arun_pulse(persona, "counter_loop", "", pulse_id="x", args={"limit": 3}),
                runtime.arun_pulse(persona, "counter_loop", "", pulse_id="y", args={"limit": 6}),
            )
        )

    first, second = asyncio.run(both())
    assert (first.status, second.status) == ("ok", "ok")
    assert first.outputs["count"] == 3 and second.outputs["count"] == 6
    assert {e.pulse_id for e in first.events} == {"x"}
    assert {e.pulse_id for e in second.events} == {"y"}
    assert runtime.services.compiler.cached() == 1


def test_a_runtime_built_from_playbook_directories(
    store: Any, persona: Persona, tmp_path: Path
) -> None:
    model = ScriptedChatModel.from_mapping({"default": ["Hello!"]})
    with Runtime(RuntimeConfig(store, ModelSet.single(model), library=[PLAYBOOKS])) as runtime:
        result = runtime.run_pulse(persona, "echo_topic", "", args={"topic": "owls"})
        assert result.status == "ok", result.error
        assert result.outputs == {"result": "topic=owls depth=1"}
        bundled = runtime.run_pulse(persona, "basic_chat", "hi")  # found after the given ones
        assert bundled.status == "ok", bundled.error
        assert bundled.spoken == ["Hello!"]
    with pytest.raises(UsageError, match="playbook directory not found: .*nowhere"):
        Runtime(RuntimeConfig(store, ModelSet.single(model), library=tmp_path / "nowhere"))


def test_an_observer_sees_the_events_of_a_pulse_run_to_its_end(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    import asyncio

    runtime, _ = make_runtime()
    seen: list[Any] = []
    result = asyncio.run(runtime.arun_pulse(persona, "counter_loop", "", pulse_id="o",
                                            args={"limit": 2}, observe=seen.append))
    assert result.status == "ok"
    assert [e.kind for e in seen] == [e.kind for e in result.events]
    assert seen[0].kind == "pulse_start" and seen[-1].kind == "pulse_end"
