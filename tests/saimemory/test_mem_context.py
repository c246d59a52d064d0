"""Context assembly by profile (Base / Main / Specialized)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from saimemory import CONVERSATION_TAG, MemoryStoreError, NewMessage, Persona
from saimemory.records import ENGINE_MEMO
from saimemory.sqlbase import SqlStore
from sea.llm.context import PROFILE_MODEL, build_messages, wrap_system

ALICE = Persona(id="alice", name="Alice", system_prompt="You are Alice, a kind guide.")


def fill(store: SqlStore) -> None:
    store.append(NewMessage("alice", "user", "hello", pulse_id="p0", tags=(CONVERSATION_TAG,)))
    store.append(NewMessage("alice", "assistant", "hi!", pulse_id="p0", tags=(CONVERSATION_TAG,)))
    store.append(NewMessage("alice", "user", "what's up?", pulse_id="p1",
                            tags=(CONVERSATION_TAG,)))
    engine = {ENGINE_MEMO: True}  # written by the engine: these keep the <system> marker
    store.append(NewMessage("alice", "system", "tool said 3", pulse_id="p1", metadata=engine))
    store.append(NewMessage("alice", "user", "<system>\nresult\n</system>", pulse_id="p1",
                            metadata=engine))


def test_conversation_profile_has_base_history_pulse_and_prompt(store: SqlStore) -> None:
    fill(store)
    got = build_messages(store, ALICE, profile="conversation", pulse_id="p1", prompt="Answer.")
    assert [type(m) for m in got] == [SystemMessage, HumanMessage, AIMessage, HumanMessage,
                                      HumanMessage, HumanMessage, HumanMessage]
    assert [m.content for m in got] == [
        "You are Alice, a kind guide.", "hello", "hi!", "what's up?",
        "<system>\ntool said 3\n</system>", "<system>\nresult\n</system>",
        "<system>\nAnswer.\n</system>",
    ]


def test_router_profile_sees_the_same_context(store: SqlStore) -> None:
    fill(store)
    conv = build_messages(store, ALICE, profile="conversation", pulse_id="p1", prompt=None)
    router = build_messages(store, ALICE, profile="router", pulse_id="p1", prompt=None)
    assert [m.content for m in conv] == [m.content for m in router]
    assert len(conv) == 6


@pytest.mark.parametrize("profile", ["worker", "worker_light"])
def test_worker_profiles_get_no_history(store: SqlStore, profile: str) -> None:
    fill(store)
    got = build_messages(store, ALICE, profile=profile, pulse_id="p1", prompt="Sum 1+2.")
    assert [m.content for m in got] == [
        "You are Alice, a kind guide.", "<system>\nSum 1+2.\n</system>"
    ]


def test_prompt_already_wrapped_is_not_wrapped_again(store: SqlStore) -> None:
    got = build_messages(store, ALICE, profile="worker", pulse_id=None,
                         prompt="<system>do it</system>")
    assert got[-1].content == "<system>do it</system>"


def test_name_is_added_when_prompt_does_not_mention_it(store: SqlStore) -> None:
    bare = Persona(id="bob", name="Bob")
    other = Persona(id="bob", name="Bob", system_prompt="Be terse.")
    assert build_messages(store, bare, profile="worker", pulse_id=None, prompt=None)[0].content \
        == "You are Bob."
    assert build_messages(store, other, profile="worker", pulse_id=None, prompt=None)[0].content \
        == "You are Bob.\n\nBe terse."


def test_unknown_profile_is_an_error(store: SqlStore) -> None:
    with pytest.raises(MemoryStoreError, match="unknown context profile 'chat'"):
        build_messages(store, ALICE, profile="chat", pulse_id=None, prompt=None)


def test_profile_models() -> None:
    assert PROFILE_MODEL == {"conversation": "normal", "router": "lightweight",
                             "worker": "normal", "worker_light": "lightweight",
                             "base_main_specialized": "normal", "base_main": "normal",
                             "base_specialized": "lightweight"}
    assert wrap_system("x") == "<system>\nx\n</system>"
