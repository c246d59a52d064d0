"""Cancellation: stops the pulse, never routed to error_next, partial replies not stored."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk

from saimemory.records import Persona
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import Event, LLMCalled, NodeEnded, PulseEnded, TokenChunk
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.engine.conftest import MakeRuntime

WORDS = " ".join(f"word{i}" for i in range(300))


def _cancel_on_first_token(runtime: Any, persona: Persona, playbook: str) -> list[Event]:
    async def go() -> list[Event]:
        events: list[Event] = []
        async for event in runtime.astream_pulse(persona, playbook, "hi", pulse_id="c1"):
            events.append(event)
            if isinstance(event, TokenChunk) and len(events) < 1000:
                runtime.cancel("c1")
        return events

    return asyncio.run(go())


@pytest.mark.parametrize("playbook", ["speak_long", "exec_speak"])
def test_cancel_mid_stream_is_not_routed_and_stores_no_partial_reply(
    make_runtime: MakeRuntime, persona: Persona, store: Any, playbook: str
) -> None:
    runtime, _ = make_runtime({"responses": {"sub_speak.compose": [WORDS]}})
    events = _cancel_on_first_token(runtime, persona, playbook)
    end = events[-1]
    assert isinstance(end, PulseEnded) and end.status == "cancelled"
    tokens = [e for e in events if isinstance(e, TokenChunk)]
    assert 1 <= len(tokens) < 300
    assert [m.role for m in store.pulse_messages(persona.id, "c1")] == ["user"]
    ran = [e.node for e in events if isinstance(e, NodeEnded)]
    assert "recover" not in ran  # error_next of the subplay/exec never ran
    [record] = [e.record for e in events if isinstance(e, LLMCalled)]
    assert record.outcome == "cancelled"


def test_cancel_unknown_pulse_is_false(make_runtime: MakeRuntime) -> None:
    runtime, _ = make_runtime()
    assert runtime.cancel("nope") is False


def test_a_host_that_stops_reading_cancels_the_pulse_there_and_then(
    make_runtime: MakeRuntime, persona: Persona, store: Any
) -> None:
    runtime, model = make_runtime({"responses": {"sub_speak.compose": [WORDS]}})

    async def go() -> tuple[int, bool]:
        events = runtime.astream_pulse(persona, "speak_long", "hi", pulse_id="c2")
        tokens = 0
        async for event in events:
            if isinstance(event, TokenChunk):
                tokens += 1
                if tokens == 3:
                    break
        await events.aclose()
        return tokens, runtime.cancel("c2")

    tokens, still_running = asyncio.run(go())
    assert tokens == 3
    assert still_running is False  # nothing left running once the host closed the stream
    assert [m.role for m in store.pulse_messages(persona.id, "c2")] == ["user"]
    assert model.remaining("sub_speak.compose") == 0  # the reply was begun, never stored


class SlowStream(ScriptedChatModel):
    """Streams like a remote model: a little time passes between chunks."""

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
            yield chunk
            await asyncio.sleep(0.01)


def test_sync_stream_yields_typed_events_and_closing_it_cancels_the_pulse(
    persona: Persona, store: Any, library: PlaybookLibrary, tmp_path: Path
) -> None:
    # The pulse runs on the runtime's loop thread while the host reads; a model that takes
    # its time (300 chunks, 3 s) is still streaming when the host closes the stream.
    model = SlowStream.from_mapping({"responses": {"sub_speak.compose": ["Hi there.", WORDS]}})
    runtime = Runtime(RuntimeConfig(
        store, ModelSet.single(model), library=library, checkpoint_path=tmp_path / "c.sqlite")
    )
    whole = list(runtime.stream_pulse(persona, "speak_long", "hi", pulse_id="s1"))
    assert isinstance(whole[-1], PulseEnded) and whole[-1].status == "ok"
    assert "".join(e.text for e in whole if isinstance(e, TokenChunk)) == "Hi there."
    assert [m.content for m in store.pulse_messages(persona.id, "s1")] == ["hi", "Hi there."]

    events = runtime.stream_pulse(persona, "speak_long", "more", pulse_id="s2")
    first = next(e for e in events if isinstance(e, TokenChunk))
    assert first.node == "compose"
    events.close()
    assert runtime.cancel("s2") is False
    assert [m.role for m in store.pulse_messages(persona.id, "s2")] == ["user"]
    runtime.close()


def test_sync_stream_inside_an_event_loop_is_a_usage_error(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime()

    async def inside() -> None:
        runtime.stream_pulse(persona, "speak_long", "hi")

    with pytest.raises(UsageError, match="use astream_pulse"):
        asyncio.run(inside())
