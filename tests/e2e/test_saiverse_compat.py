"""Playbooks written in SAIVerse's form run as they are, with SAIVerse's implicit rules.

The playbooks in ``tests/data/saiverse_compat`` declare nothing SAIVerse did not make them
declare: ``executed_playbooks``, ``tool_called``, ``tool_arg_query``, ``metadata`` and a
callee's ``input`` come from the runtime, and a boolean is matched with the key ``"True"``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from saimemory.sqlite import SQLiteStore
from sea.engine.events import Spoken
from sea.engine.limits import Limits
from sea.host.runtime import Runtime
from tests.e2e.conftest import PERSONA, MakeRuntime, contents, request_of

COMPAT = Path(__file__).resolve().parent.parent / "data" / "saiverse_compat"

CHAT = {"reason": "small talk", "playbook": "basic_chat"}
NOTES = {"reason": "asks about the pets", "playbook": "pet_notes"}

Make = Callable[..., Runtime]


@pytest.fixture
def make(make_runtime: MakeRuntime) -> Make:
    """Runtimes whose library holds the SAIVerse-form playbooks."""

    def build(responses: dict[str, list[Any]], limits: Limits | None = None) -> Runtime:
        return make_runtime(responses, dirs=(COMPAT,), limits=limits)

    return build


def _ran(result: Any) -> list[str]:
    return [f"{e.playbook}.{e.node}" for e in result.events if e.kind == "node_start"]


def test_meta_user_in_saiverse_form_routes_to_plain_chat(make: Make) -> None:
    runtime = make({
        "sub_router_user.decide": [CHAT],
        "sub_speak.compose": ["Hi! Nice to see you."],
    })
    result = runtime.run_pulse(PERSONA, "meta_user", "Hello there")
    assert result.status == "ok", result.error
    assert result.spoken == ["Hi! Nice to see you."]
    assert "meta_user.exec" not in _ran(result)
    prompt = contents(request_of(result, "sub_router_user", "decide"))
    # the five arguments arrive: executed_playbooks was created by `executed_playbooks_init`
    assert "inside meta_user (Route, gather, answer)" in prompt
    assert "Already run: []" in prompt
    assert "pet_notes" in prompt  # list_available_playbooks' answer
    assert result.outputs["executed_playbooks"] == []
    (spoken,) = [e for e in result.events if isinstance(e, Spoken)]
    assert spoken.metadata == {}  # no user metadata: `{metadata}` is {}


def test_meta_user_gathers_then_the_memo_reaches_the_speaker(
    make: Make, store: SQLiteStore
) -> None:
    runtime = make({
        "sub_router_user.decide": [CHAT, NOTES],
        "pet_notes.pick": [{"tool_calls": [{"name": "memory_search", "args": {"query": "Tama"}}]}],
        "sub_speak.compose": ["What a lovely cat!", "Tama is your cat who loves boxes."],
    })
    runtime.run_pulse(PERSONA, "meta_user", "My cat Tama loves boxes.")
    media = {"media": [{"type": "image", "uri": "file:///tama.png"}]}
    result = runtime.run_pulse(
        PERSONA, "meta_user", "What do you remember about my pets?", args={"metadata": media}
    )
    assert result.status == "ok", result.error
    # no args from the router: the callee's `input` is the caller's input
    assert "What do you remember about my pets?" in contents(
        request_of(result, "pet_notes", "pick")
    )
    # tool_called (a boolean) matched the case key "True"; tool_arg_query fed the search
    assert "pet_notes.search" in _ran(result) and "pet_notes.direct" not in _ran(result)
    searches = [e.args for e in result.events if e.kind == "tool_call"
                and e.tool == "memory_search"]
    assert searches == [{"query": "Tama"}]
    (memo,) = [w for w in result.memory_writes if w.playbook == "pet_notes"]
    assert "Searched `memory_search` for Tama:" in memo.content
    assert "Tama loves boxes" in memo.content
    assert memo.content in contents(request_of(result, "sub_speak", "compose"))
    assert result.spoken == ["Tama is your cat who loves boxes."]
    assert result.outputs["executed_playbooks"] == ["pet_notes"]
    (spoken,) = [e for e in result.events if isinstance(e, Spoken)]
    assert spoken.metadata == media  # the user message's metadata reached sub_speak
    reply = store.recent(PERSONA.id, limit=1)[-1]
    assert reply.content == "Tama is your cat who loves boxes."


def test_a_text_answer_takes_the_false_case_and_keeps_speak_content(make: Make) -> None:
    runtime = make({
        "sub_router_user.decide": [{**NOTES, "args": {"input": "the dog"}}],
        "pet_notes.pick": ["No search needed: the dog is called Pochi."],
        "sub_speak.compose": ["Pochi!"],
    })
    result = runtime.run_pulse(PERSONA, "meta_user", "And my dog?")
    assert result.status == "ok", result.error
    assert "the dog" in contents(request_of(result, "pet_notes", "pick"))  # args.input first
    assert "pet_notes.direct" in _ran(result) and "pet_notes.search" not in _ran(result)
    (memo,) = [w for w in result.memory_writes if w.playbook == "pet_notes"]
    assert "the dog is called Pochi" in memo.content


def test_a_callee_without_input_gets_the_callers_last_when_the_input_is_empty(
    make: Make,
) -> None:
    runtime = make({"think_aloud.muse": ["Rainy days suit reading.", "Tea is warm."]})
    result = runtime.run_pulse(PERSONA, "think_aloud", "")
    assert result.status == "ok", result.error
    (note,) = [w for w in result.memory_writes if w.playbook == "note_down"]
    assert note.content == "Note: Rainy days suit reading."

    given = runtime.run_pulse(PERSONA, "think_aloud", "tea")
    assert given.status == "ok", given.error
    (note,) = [w for w in given.memory_writes if w.playbook == "note_down"]
    assert note.content == "Note: tea"  # the caller's input comes before its last


def test_a_variable_only_a_chosen_callee_returns_is_set_when_it_ran(make: Make) -> None:
    limits = Limits(unlisted_exec="ask")
    runtime = make({}, limits)
    waiting = runtime.run_pulse(
        PERSONA, "meta_research", "old maps", args={"chosen": "deep_notes"}
    )
    assert waiting.status == "waiting", waiting.error
    done = runtime.run_resume(waiting.pulse_id, {"approved": True})
    assert done.status == "ok", done.error
    (kept,) = [w for w in done.memory_writes if w.playbook == "meta_research"]
    assert kept.content == "Found: A deep note about old maps"
