"""A pulse's trace made afterwards from its logged events (what ``sea serve`` keeps) is the
trace a recorder fed the events as they happened makes: every event read back from its JSON
is the event it was."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from saimemory import Persona
from saimemory.base import DEFAULT_BUDGET
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import Event, event_from_json
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from sea.trace.logged import trace_of_logged
from sea.trace.recorder import TraceRecorder, history_snapshot

PERSONA = Persona("aoi", "Aoi", "You are Aoi.")
ANSWERS = {"sub_router_user.decide": [{"playbook": "basic_chat", "reason": "a greeting"}] * 2,
           "sub_speak.compose": ["Hello! I'm Aoi."]}


def pulse_events(tmp_path: Path, store: SQLiteStore, text: str, pulse_id: str) -> list[Event]:
    model = ScriptedChatModel(responses=ANSWERS)
    runtime = Runtime(RuntimeConfig(store, ModelSet(normal=model, lightweight=model),
                                    library=PlaybookLibrary.bundled([]),
                                    checkpoint_path=tmp_path / "checkpoints.sqlite"))

    async def run() -> list[Event]:
        return [event async for event in runtime.astream_pulse(PERSONA, "meta_user", text,
                                                                 pulse_id=pulse_id)]

    try:
        return asyncio.run(run())
    finally:
        runtime.close()


def test_logged_events_make_the_trace_a_recorder_makes(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.sqlite")
    try:
        pulse_events(tmp_path, store, "hi", "p1")  # earlier conversation
        pulse_id = "p2"
        history = history_snapshot(store, "aoi", DEFAULT_BUDGET, pulse_id)  # as --record does
        started = datetime.now(UTC) - timedelta(milliseconds=1)
        events = pulse_events(tmp_path, store, "hello again", pulse_id)
        logged = [orjson.loads(orjson.dumps(event.to_json())) for event in events]
        assert [event_from_json(data) for data in logged] == events
        recorder = TraceRecorder(PERSONA, "meta_user", "hello again", pulse_id, history,
                                 recorded_at=started)
        for event in events:
            recorder.observe(event)
        library = PlaybookLibrary.bundled([])

        def hashes(names: list[str]) -> dict[str, str]:
            return {name: library.content_hash(name) for name in names}

        made = trace_of_logged([{"kind": "metadata", "run_id": "r1"}, *logged,
                                {"kind": "end", "status": "ok"}],
                               persona=PERSONA, playbook="meta_user", pulse_id=pulse_id,
                               started=started, store=store, budget=DEFAULT_BUDGET,
                               hashes=hashes)
        wanted = recorder.trace(hashes(recorder.playbooks_run()))
        assert made == wanted
        assert [m["content"] for m in made.history] == ["hi", "Hello! I'm Aoi."]
        assert made.spoken == ["Hello! I'm Aoi."]  # a new model: its first answer again
    finally:
        store.close()


def test_an_unknown_kind_is_none_and_unknown_fields_are_left_out() -> None:
    assert event_from_json({"kind": "from_the_future", "pulse_id": "p"}) is None
    event = event_from_json({"kind": "pulse_end", "pulse_id": "p", "status": "ok",
                             "duration_s": 1.5, "error": None, "added_later": 1})
    assert event is not None and event.to_json() == {
        "kind": "pulse_end", "pulse_id": "p", "status": "ok", "duration_s": 1.5, "error": None}
