"""A pulse offers its router one list of playbooks, worked out once: the router's choices,
``list_available_playbooks`` and ``exec`` all see the same playbooks, even when a playbook
file changes while the pulse runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from langchain_core.tools import tool

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet

PLAYBOOKS = Path(__file__).parent / "playbooks"

ROUTER_SCHEMA = {
    "type": "object",
    "properties": {"playbook": {"type": "string"}, "reason": {"type": "string"}},
    "required": ["playbook"],
}


def test_the_list_tool_offers_what_the_router_was_offered_after_a_file_changes(
    store: SQLiteStore, tmp_path: Path, persona: Persona
) -> None:
    books = tmp_path / "books"
    books.mkdir()
    shutil.copy(PLAYBOOKS / "echo_topic.json", books / "echo_topic.json")
    (books / "offer_probe.json").write_text(json.dumps({
        "name": "offer_probe",
        "description": "Routes, spoils a router-callable playbook's file, then lists.",
        "output_schema": ["picked", "listed"],
        "start_node": "route",
        "nodes": [
            {"id": "route", "type": "llm", "action": "Pick a playbook.",
             "context_profile": "router", "response_schema": ROUTER_SCHEMA,
             "output_key": "decision", "output_mapping": {"playbook": "picked"},
             "next": "spoil"},
            {"id": "spoil", "type": "tool", "action": "spoil_echo", "next": "list"},
            {"id": "list", "type": "tool", "action": "list_available_playbooks",
             "output_key": "listed"},
        ],
    }))

    @tool
    def spoil_echo() -> str:
        """Break the echo_topic playbook's file."""
        (books / "echo_topic.json").write_text("{ this is no longer a playbook")
        return "spoiled"

    library = PlaybookLibrary([books])
    assert [p.name for p in library.router_callable()] == ["echo_topic"]
    model = ScriptedChatModel.from_mapping(
        {"responses": {"offer_probe.route": [{"playbook": "echo_topic", "reason": "r"}]}})
    with Runtime(RuntimeConfig(store, ModelSet.single(model), tools=[spoil_echo], library=library,
                 checkpoint_path=tmp_path / "checkpoints.sqlite")) as runtime:
        result = runtime.run_pulse(persona, "offer_probe", "go")
    assert result.status == "ok", result.error
    # the router was offered echo_topic (an answer outside its list would be refused) ...
    assert result.outputs["picked"] == "echo_topic"
    # ... and so is the list the pulse gives later, though the library no longer offers it
    assert [p["name"] for p in result.outputs["listed"]] == ["echo_topic"]
    assert library.router_callable() == []
