"""A pulse that waits for approval and is resumed by another process (``sea resume
--otel``): the resumed drive's root span links to the span that waited, across the two
processes. And a model call that failed and was asked again is one span saying so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from saimemory.records import NewMessage, Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.cli._setup import checkpoint_location
from sea.engine.limits import Limits
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.telemetry.conftest import Otel
from tests.telemetry.test_pulse_spans import MOCHI


def _console_spans(stdout: str) -> list[dict[str, Any]]:
    """The spans the SDK's console exporter printed, among the command's own output."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while (start := stdout.find("{", at)) != -1:
        try:
            value, at = decoder.raw_decode(stdout, start)
        except json.JSONDecodeError:
            at = start + 1
            continue
        if isinstance(value, dict) and "context" in value and "links" in value:
            found.append(value)
    return found


def test_a_pulse_resumed_by_another_process_links_to_the_span_that_waited(
    otel: Otel, persona: Persona, tmp_path: Path
) -> None:
    db = tmp_path / "memory.sqlite"
    store = SQLiteStore(db)
    store.append(NewMessage(persona.id, "user", "My cat is called Mochi.", ("conversation",)))
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps(MOCHI))
    config = RuntimeConfig(
        store, ModelSet.single(ScriptedChatModel.from_mapping(MOCHI)),
        library=PlaybookLibrary.bundled(), checkpoint_path=checkpoint_location(str(db)),
        limits=Limits(approval_tools=frozenset({"memory_search"})),
        telemetry=otel.telemetry())
    with Runtime(config) as runtime:
        waiting = runtime.run_pulse(persona, "meta_user", "What is my cat called?")
    store.close()
    assert waiting.status == "waiting", waiting.error
    [first] = otel.named("sea.pulse")
    assert [e.name for e in first.events] == ["sea.memory.write", "sea.approval.requested"]
    assert (first.attributes or {})["sea.pulse.status"] == "waiting"

    env = {**os.environ, "OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"}
    done = subprocess.run(
        [sys.executable, "-m", "sea", "resume", waiting.pulse_id, "--approve", "--otel",
         "--db", str(db), "--model", f"scripted:{script}", "--ask-before", "memory_search",
         "--no-project"],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    spans = _console_spans(done.stdout)
    [root] = [s for s in spans if s["name"].startswith("sea.pulse")]
    assert root["name"] == "sea.pulse meta_user"
    assert root["attributes"]["sea.pulse.mode"] == "resume"
    assert root["attributes"]["sea.pulse.status"] == "ok"
    assert root["attributes"]["sea.persona"] == persona.id
    assert first.context is not None
    [link] = root["links"]
    assert link["context"]["trace_id"] == f"0x{first.context.trace_id:032x}"
    assert link["context"]["span_id"] == f"0x{first.context.span_id:016x}"
    assert link["attributes"] == {"sea.link": "resumes"}
    names = {s["name"] for s in spans}
    assert "execute_tool memory_search" in names and "chat scripted" in names


def test_a_failed_and_retried_model_call_is_one_span_with_its_retries(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    # the router's first answer breaks its schema, the second one too, the third is kept
    bad = {"playbook": 7}
    script = {"responses": {
        "sub_router_user.decide": [bad, bad, {"playbook": "basic_chat", "reason": "chat"}],
        "sub_speak.compose": ["Hello."],
    }}
    config = RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping(script)),
                           library=PlaybookLibrary.bundled(), max_retries=2,
                           telemetry=otel.telemetry())
    with Runtime(config) as runtime:
        result = runtime.run_pulse(persona, "meta_user", "Do you remember my cat?")
    assert result.status == "ok", result.error
    [decide] = [s for s in otel.named("chat ") if (s.attributes or {})["sea.node"] == "decide"]
    attrs = decide.attributes or {}
    assert attrs["sea.llm.retries"] == 2
    assert [e.name for e in decide.events] == ["sea.llm.retry", "sea.llm.retry"]
    assert [(e.attributes or {})["sea.llm.attempt"] for e in decide.events] == [1, 2]
    assert "sea.llm.answer" not in (decide.events[0].attributes or {})


def test_a_model_call_that_fails_marks_its_span_and_the_pulse_an_error(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    bad = {"playbook": 7}
    script = {"responses": {"sub_router_user.decide": [bad, bad, bad]}}
    config = RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping(script)),
                           library=PlaybookLibrary.bundled(), max_retries=2,
                           telemetry=otel.telemetry())
    with Runtime(config) as runtime:
        result = runtime.run_pulse(persona, "meta_user", "Do you remember my cat?")
    assert result.status == "error"
    [decide] = [s for s in otel.named("chat ") if (s.attributes or {})["sea.node"] == "decide"]
    assert decide.status.status_code.name == "ERROR"
    assert (decide.attributes or {})["error.type"] == "error"
    # every answer was refused, then the node failed: its span is the call's
    assert [e.name for e in decide.events] == ["sea.llm.retry"] * 3 + ["sea.error"]
    assert [(e.attributes or {})["sea.llm.attempt"] for e in decide.events[:3]] == [1, 2, 3]
    assert (decide.attributes or {})["sea.node.outcome"] == "failed"
    [root] = otel.named("sea.pulse")
    assert root.status.status_code.name == "ERROR"
    assert (root.attributes or {})["error.type"] == result.error["code"]  # type: ignore[index]
    errors = otel.metric_points()["sea.errors"]
    assert sum(p.value for p in errors) >= 1  # type: ignore[attr-defined]
