"""Built-in tools against a real SQLite store and the bundled playbooks."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from saimemory import CONVERSATION_TAG, NewMessage
from saimemory.sqlite import SQLiteStore
from sea.engine.tools.box import ToolBox
from sea.engine.tools.builtin import builtin_tools
from sea.engine.tools.signatures import builtin_tool_schemas
from sea.errors import ToolArgumentError
from sea.lang.models import Playbook
from sea.resources import bundled_playbooks_dir

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class BundledCatalog:
    """The bundled playbooks, read from their files."""

    def __init__(self, directory: Path) -> None:
        files = sorted(directory.glob("*.json"))
        self.playbooks = [Playbook.model_validate(json.loads(f.read_text())) for f in files]

    def router_callable(self) -> list[Playbook]:
        return [p for p in self.playbooks if p.router_callable]


@pytest.fixture
def box(store: SQLiteStore) -> ToolBox:
    catalog = BundledCatalog(bundled_playbooks_dir())
    return ToolBox(builtin_tools(store=store, persona_id="mika", library=catalog))


def write(store: SQLiteStore, minutes: int, role: str, text: str, pulse: str, *tags: str) -> None:
    store.append(
        NewMessage(
            "mika",
            role,  # type: ignore[arg-type]
            text,
            tags=tags,
            pulse_id=pulse,
            created_at=START + timedelta(minutes=minutes),
        )
    )


def fill(store: SQLiteStore) -> None:
    conv = CONVERSATION_TAG
    write(store, 0, "user", "My cat is called Tama.", "p0", conv)
    write(store, 1, "assistant", "Tama is a lovely name for a cat.", "p0", conv)
    write(store, 2, "user", "I planted tomatoes today.", "p1", conv)
    write(store, 3, "user", "<system>notes about the cat food</system>", "p1", "playbook_result")
    write(store, 4, "user", "What was my cat called?", "p2", conv)
    store.append(NewMessage("other", "user", "My cat is called Kuro.", pulse_id="x"))


def call(box: ToolBox, name: str, args: dict[str, Any], pulse_id: str | None = None) -> Any:
    return asyncio.run(box.invoke(name, args, playbook="pb", node="n", pulse_id=pulse_id))


def test_the_six_builtin_tools_are_there(box: ToolBox) -> None:
    assert box.names() == ["list_available_playbooks", "memory_recent", "memory_search",
                           "plan_memory", "rank_playbooks", "spot_file_question"]


def test_rank_playbooks_leaves_the_likeliest_for_the_model(box: ToolBox) -> None:
    ranked = call(box, "rank_playbooks", {"query": "do you remember my dog's name?"})
    assert ranked["best"] == "memory_recall" and ranked["decided"]
    assert ranked["scores"]["memory_recall"] > ranked["scores"]["basic_chat"]
    unsure = call(box, "rank_playbooks", {"query": "I forgot, who am I travelling with?"})
    assert unsure["candidates"][0] == "memory_recall" and not unsure["decided"]
    assert unsure["candidates"][-1] == "basic_chat"
    assert [p["name"] for p in unsure["listing"]] == unsure["candidates"]
    assert [p["name"] for p in ranked["listing"]] == ranked["candidates"]
    assert set(ranked["scores"]) == {
        "basic_chat", "memory_recall", "memory_research", "sub_act", "sub_plan", "uri_view"}


def test_rank_playbooks_falls_back_to_basic_chat_when_nothing_matches(box: ToolBox) -> None:
    ranked = call(box, "rank_playbooks", {"query": "why is the sky blue"})
    assert ranked["candidates"] == ["basic_chat"] and ranked["decided"]


def test_rank_playbooks_refuses_a_missing_query(box: ToolBox) -> None:
    with pytest.raises(ToolArgumentError):
        call(box, "rank_playbooks", {})


def test_list_available_playbooks_gives_router_callable_names_and_descriptions(
    box: ToolBox,
) -> None:
    listed = call(box, "list_available_playbooks", {})
    assert [p["name"] for p in listed] == [
        "basic_chat", "memory_recall", "memory_research", "sub_act", "sub_plan", "uri_view"
    ]
    assert all(p["description"] for p in listed)
    assert set(listed[0]) == {"name", "description"}


def test_memory_search_finds_the_persona_s_messages(store: SQLiteStore, box: ToolBox) -> None:
    fill(store)
    hits = call(box, "memory_search", {"query": "cat", "limit": 10})
    contents = {h["content"] for h in hits}
    assert "My cat is called Tama." in contents
    assert "Tama is a lovely name for a cat." in contents
    assert "My cat is called Kuro." not in contents
    assert "I planted tomatoes today." not in contents
    assert set(hits[0]) == {"role", "content", "created_at"}
    assert datetime.fromisoformat(hits[0]["created_at"]).tzinfo is not None


def test_memory_search_leaves_out_the_current_pulse(store: SQLiteStore, box: ToolBox) -> None:
    fill(store)
    everything = call(box, "memory_search", {"query": "cat", "limit": 10})
    earlier = call(box, "memory_search", {"query": "cat", "limit": 10}, pulse_id="p2")
    assert "What was my cat called?" in {h["content"] for h in everything}
    assert "What was my cat called?" not in {h["content"] for h in earlier}
    assert len(earlier) == len(everything) - 1


def test_memory_search_filters_by_tag_and_limit(store: SQLiteStore, box: ToolBox) -> None:
    fill(store)
    tagged = call(box, "memory_search", {"query": "cat", "tags": ["playbook_result"]})
    assert [h["content"] for h in tagged] == ["<system>notes about the cat food</system>"]
    assert len(call(box, "memory_search", {"query": "cat", "limit": 1})) == 1


def test_memory_search_takes_a_natural_question_by_default(
    store: SQLiteStore, box: ToolBox
) -> None:
    fill(store)
    hits = call(box, "memory_search", {"query": "What was my cat called?"}, pulse_id="p2")
    assert [h["content"] for h in hits] == [
        "My cat is called Tama.",
        "<system>notes about the cat food</system>",
        "Tama is a lovely name for a cat.",
    ]
    every_word = {"query": "What was my cat called?", "match": "all"}
    assert call(box, "memory_search", every_word, pulse_id="p2") == []
    exact = call(box, "memory_search", {"query": "cat is called", "match": "all"})
    assert [h["content"] for h in exact] == ["My cat is called Tama."]


def test_memory_search_checks_its_arguments(box: ToolBox) -> None:
    with pytest.raises(ToolArgumentError, match="argument 'query'"):
        call(box, "memory_search", {"query": ""})
    with pytest.raises(ToolArgumentError, match="argument 'limit'"):
        call(box, "memory_search", {"query": "cat", "limit": 0})
    with pytest.raises(ToolArgumentError, match="argument 'match'"):
        call(box, "memory_search", {"query": "cat", "match": "some"})


def test_memory_recent_is_oldest_first_and_bounded(store: SQLiteStore, box: ToolBox) -> None:
    fill(store)
    recent = call(box, "memory_recent", {"limit": 2})
    assert [m["content"] for m in recent] == [
        "<system>notes about the cat food</system>",
        "What was my cat called?",
    ]
    before_pulse = call(box, "memory_recent", {"limit": 2}, pulse_id="p2")
    assert [m["content"] for m in before_pulse] == [
        "I planted tomatoes today.",
        "<system>notes about the cat food</system>",
    ]


def test_memory_recent_default_limit(store: SQLiteStore, box: ToolBox) -> None:
    fill(store)
    assert len(call(box, "memory_recent", {})) == 5


def test_a_busy_pulse_does_not_crowd_out_earlier_messages(
    store: SQLiteStore, box: ToolBox
) -> None:
    fill(store)
    for minute in range(10, 70):  # the current pulse has written a lot already
        write(store, minute, "user", f"<system>cat note {minute}</system>", "p3", "internal")
    recent = call(box, "memory_recent", {"limit": 3}, pulse_id="p3")
    assert [m["content"] for m in recent] == [
        "I planted tomatoes today.",
        "<system>notes about the cat food</system>",
        "What was my cat called?",
    ]
    found = call(box, "memory_search", {"query": "cat", "limit": 4}, pulse_id="p3")
    assert len(found) == 4
    assert not any("cat note" in m["content"] for m in found)


def test_the_validator_catalogue_names_exactly_the_builtin_tools(store: SQLiteStore) -> None:
    catalog = BundledCatalog(bundled_playbooks_dir())
    tools = builtin_tools(store=store, persona_id="mika", library=catalog)
    schemas = builtin_tool_schemas()
    assert sorted(schemas) == sorted(tool.name for tool in tools)
    assert schemas["memory_search"]["required"] == ["query"]


class WatchedCatalog(BundledCatalog):
    """The bundled catalogue, noting the thread each listing is asked from."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.threads: list[int] = []

    def router_callable(self) -> list[Playbook]:
        self.threads.append(threading.get_ident())
        return super().router_callable()


def test_listing_the_playbooks_takes_no_worker_thread(store: SQLiteStore) -> None:
    catalog = WatchedCatalog(bundled_playbooks_dir())
    box = ToolBox(builtin_tools(store=store, persona_id="mika", library=catalog))

    async def listed_from() -> int:
        await box.invoke("list_available_playbooks", {}, playbook="pb", node="n")
        return threading.get_ident()

    loop_thread = asyncio.run(listed_from())
    assert catalog.threads == [loop_thread]


def test_each_maker_makes_the_tool_of_its_name(store: SQLiteStore) -> None:
    """The built-in and model tools a pulse's box makes on first use: one per catalogue
    entry, each under its own name."""
    from saimemory import Persona
    from sea.chat.scripted import ScriptedChatModel
    from sea.engine.tools.builtin import builtin_tool_makers
    from sea.engine.tools.model_signatures import MODEL_TOOL_ARGUMENTS
    from sea.engine.tools.model_tools import model_tool_makers
    from sea.engine.tools.signatures import ARGUMENTS
    from sea.llm.call import LLMCaller
    from sea.llm.intent import IntentPolicy
    from sea.llm.models import ModelSet

    catalog = BundledCatalog(bundled_playbooks_dir())
    caller = LLMCaller(ModelSet.single(ScriptedChatModel(script={})), store)
    for makers, catalogue in [
        (builtin_tool_makers(store=store, persona_id="mika", library=catalog), ARGUMENTS),
        (model_tool_makers(store=store, persona=Persona("mika", "Mika"), caller=caller,
                           intent=IntentPolicy()), MODEL_TOOL_ARGUMENTS),
    ]:
        box = ToolBox(makers=makers)
        assert box.names() == sorted(catalogue)
        assert {name: box.get(name).args_schema for name in box.names()} == dict(catalogue)
