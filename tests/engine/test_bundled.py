"""The bundled playbooks end to end: router → chosen playbook → speaker, through memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from saimemory.records import NewMessage, Persona
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet


def test_meta_user_recalls_then_speaks(store: Any, persona: Persona, tmp_path: Path) -> None:
    store.append(NewMessage(persona.id, "user", "My cat is called Mochi.", ("conversation",)))
    script = {
        "responses": {
            "sub_router_user.decide": [
                {"playbook": "memory_recall", "args": {"query": "Mochi"}, "reason": "asked"}
            ],
            "sub_speak.compose": ["Your cat is Mochi!"],
        }
    }
    model = ScriptedChatModel.from_mapping(script)
    runtime = Runtime(RuntimeConfig(
        store,
        ModelSet.single(model),
        library=PlaybookLibrary.bundled(),
        checkpoint_path=tmp_path / "cp.sqlite",
    ))
    try:
        result = runtime.run_pulse(persona, "meta_user", "Do you remember my cat?")
    finally:
        runtime.close()
    assert result.status == "ok", result.error
    assert result.spoken == ["Your cat is Mochi!"]
    [speak] = [c for c in model.calls if c.key == "sub_speak.compose"]
    recall = [m for m in speak.messages if "Memory recall for \"Mochi\"" in m["content"]]
    assert len(recall) == 1 and "My cat is called Mochi." in recall[0]["content"]
    assert speak.messages[-1] == recall[0]
    tools = [e.tool for e in result.events if e.kind == "tool_call"]
    assert tools == ["rank_playbooks", "plan_memory", "memory_search"]


def test_meta_agentic_loops_until_the_router_is_done(
    store: Any, persona: Persona, tmp_path: Path
) -> None:
    recall = {"playbook": "memory_recall", "args": {"query": "tea"}, "reason": "look"}
    done = {"playbook": "basic_chat", "reason": "answered"}
    script = {
        "responses": {
            "sub_router_user.decide": [recall, recall, done],
            "sub_speak.compose": ["Here is what I remember."],
        }
    }
    model = ScriptedChatModel.from_mapping(script)
    with Runtime(RuntimeConfig(
        store,
        ModelSet.single(model),
        library=PlaybookLibrary.bundled(),
        checkpoint_path=tmp_path / "cp.sqlite",
    )) as runtime:
        result = runtime.run_pulse(persona, "meta_agentic", "Do you remember my cat's tea?")
    assert result.status == "ok", result.error
    assert result.spoken == ["Here is what I remember."]
    routers = [c for c in model.calls if c.key == "sub_router_user.decide"]
    assert len(routers) == 3
    # the third routing decision sees both recall results of this pulse
    third = [m["content"] for m in routers[2].messages]
    assert sum("Memory recall for \"tea\"" in c for c in third) == 2
