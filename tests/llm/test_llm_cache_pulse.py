"""Caching over whole pulses: the prompt's stable prefix stays byte-identical across a
pulse's calls, and a second identical deterministic pulse with the response cache on makes
no model call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from saimemory import NewMessage, Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.cache import ResponseCache
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions

AOI = Persona("aoi", "Aoi", "You are Aoi, a warm and curious companion.")
RECALL = {"playbook": "memory_recall", "args": {"query": "garden"}, "reason": "asks"}
ANSWERED = {"playbook": "basic_chat", "reason": "the recall answers it"}
REPLY = "You said the tomatoes were nearly ripe."
SCRIPT = {"sub_router_user.decide": [RECALL, ANSWERED], "sub_speak.compose": [REPLY]}


def runtime(tmp_path: Path, name: str, model: ScriptedChatModel, **llm: Any) -> Runtime:
    store = SQLiteStore(tmp_path / f"{name}.sqlite")
    store.append(NewMessage(AOI.id, "user", "The tomatoes in my garden are nearly ripe.",
                            tags=("conversation",)))
    store.pin(AOI.id, "Aoi's user gardens.")
    return Runtime(RuntimeConfig(store, ModelSet.single(model),
                                 library=PlaybookLibrary.bundled([]), llm=LLMOptions(**llm)))


def test_the_stable_prefix_is_byte_identical_across_a_pulses_calls(tmp_path: Path) -> None:
    model = ScriptedChatModel(responses=SCRIPT)
    with runtime(tmp_path, "one", model) as host:
        result = host.run_pulse(AOI, "meta_agentic", "Do you remember my cat and my garden?")
    assert result.status == "ok" and result.spoken == [REPLY]
    calls = [c for c in result.llm_calls if c.outcome == "ok"]
    assert len(calls) == 3
    systems = [c.messages[0]["content"] for c in calls]
    prefixes = {c.messages[0]["content"][:c.stable_chars] for c in calls}
    assert len(prefixes) == 1  # one prefix, byte for byte, in every call
    prefix = prefixes.pop()
    assert prefix.startswith(AOI.system_prompt) and "Aoi's user gardens." in prefix
    assert all(s.startswith(prefix) for s in systems)
    assert calls[0].messages[0] == calls[1].messages[0]  # both routings: the same system


def test_a_second_identical_pulse_with_the_cache_on_makes_no_model_call(
    tmp_path: Path
) -> None:
    cache = ResponseCache.sqlite(tmp_path / "responses.sqlite")
    first_model = ScriptedChatModel(responses=SCRIPT)
    with runtime(tmp_path, "first", first_model, response_cache=cache) as host:
        first = host.run_pulse(AOI, "meta_agentic", "Do you remember my cat and my garden?")
        first_rows = host.config.store.call_records(AOI.id)
    empty = ScriptedChatModel()  # no answer at all: any model call would fail the pulse
    with runtime(tmp_path, "second", empty, response_cache=cache) as host:
        second = host.run_pulse(AOI, "meta_agentic", "Do you remember my cat and my garden?")
        rows = [r for r in host.config.store.call_records(AOI.id) if r.kind == "model"]
    assert first.status == second.status == "ok"
    assert second.spoken == first.spoken == [REPLY]
    assert empty.calls == [] and len(first_model.calls) == 3
    assert [r.cache for r in first_rows if r.kind == "model"] == ["miss"] * 3
    assert [r.cache for r in rows] == ["hit"] * 3
    assert all(r.tokens_in == r.tokens_out == 0 and r.tokens_saved > 0 for r in rows)
    assert second.usage["tokens_in"] == 0 < first.usage["tokens_in"]
