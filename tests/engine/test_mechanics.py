from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langchain_core.tools import tool

from saimemory.records import Persona
from sea.events import TokenChunk
from sea.limits import Limits
from tests.engine.conftest import MakeRuntime

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
    resumed = second.resume(result.pulse_id, True)
    assert resumed.status == "ok", resumed.error
    assert resumed.outputs["outcome"] == "sent"


def test_cancel_mid_stream(make_runtime: MakeRuntime, persona: Persona, store: Any) -> None:
    words = " ".join(f"word{i}" for i in range(300))
    runtime, _ = make_runtime({"responses": {"sub_speak.compose": [words]}})

    async def go() -> list[Any]:
        events = []
        async for event in runtime.astream_pulse(persona, "speak_long", "hi", pulse_id="p1"):
            events.append(event)
            if isinstance(event, TokenChunk):
                runtime.cancel("p1")
        return events

    events = asyncio.run(go())
    assert events[-1].status == "cancelled"
    roles = [m.role for m in store.pulse_messages(persona.id, "p1")]
    assert roles == ["user"]
