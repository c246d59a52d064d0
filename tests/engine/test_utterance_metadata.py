"""The metadata object a node attaches to what it stores or says: data, never the engine's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from saimemory.records import ENGINE_MEMO, Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import Spoken
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet

PICTURE = {"media": [{"type": "image", "uri": "file:///pictures/tama.png"}]}


def _playbook(node: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "attach",
        "description": "Attaches the `meta` argument to one node's message.",
        "input_schema": [{"name": "meta", "type": "object"}],
        "start_node": node["id"],
        "nodes": [{**node, "metadata_key": "meta"}],
    }


@pytest.fixture
def run(store: SQLiteStore, persona: Persona, tmp_path: Path) -> Iterator[Any]:
    runtimes: list[Runtime] = []

    def go(node: dict[str, Any], meta: dict[str, Any]) -> Any:
        books = tmp_path / f"books{len(runtimes)}"
        books.mkdir()
        (books / "attach.json").write_text(json.dumps(_playbook(node)), encoding="utf-8")
        runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel(responses={})),
                          library=PlaybookLibrary([books]),
                          checkpoint_path=tmp_path / f"cp{len(runtimes)}.sqlite"))
        runtimes.append(runtime)
        return runtime.run_pulse(persona, "attach", "hi", args={"meta": meta})

    yield go
    for runtime in runtimes:
        runtime.close()


def test_a_speak_node_stores_and_sends_its_metadata(
    run: Any, store: SQLiteStore, persona: Persona
) -> None:
    result = run({"id": "talk", "type": "speak", "action": "Look!"}, PICTURE)
    assert result.status == "ok", result.error
    (spoken,) = [e for e in result.events if isinstance(e, Spoken)]
    assert (spoken.text, spoken.stored, spoken.metadata) == ("Look!", True, PICTURE)
    (reply,) = [m for m in store.pulse_messages(persona.id, result.pulse_id)
                if m.role == "assistant"]
    assert reply.metadata == PICTURE and "conversation" in reply.tags


@pytest.mark.parametrize("node", [
    {"id": "talk", "type": "speak", "action": "Look!"},
    {"id": "whisper", "type": "say", "action": "psst"},
    {"id": "note", "type": "memorize", "role": "user", "action": "<system>noted</system>"},
])
@pytest.mark.parametrize("key", [ENGINE_MEMO, "sea_playbook"])
def test_no_node_lets_metadata_set_a_key_of_the_engine(
    run: Any, store: SQLiteStore, persona: Persona, node: dict[str, Any], key: str
) -> None:
    result = run(node, {key: False, **PICTURE})
    assert result.status == "error"
    assert (result.error["code"], result.error["node"]) == ("SEA550", node["id"])
    assert f"sets {key!r}, which only the engine may set" in result.error["message"]
    assert not result.spoken
    assert [m.role for m in store.pulse_messages(persona.id, result.pulse_id)] == ["user"]
