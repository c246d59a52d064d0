"""SQLite's index of tags by persona, tag and thread holds the conversation tag only
(migration 11): the conversation reads the same, and stays an index read however many
other tags the persona's messages have."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from saimemory import CONVERSATION_TAG, NewMessage
from saimemory.sqlite import SQLiteStore
from tests.saimemory.older import Version10
from tests.saimemory.test_mem_search_scale import sqlite_steps


def pulse(i: int, persona: str = "aoi") -> list[NewMessage]:
    """A pulse as the engine writes one: its input and reply are conversation, its steps not."""
    return [NewMessage(persona, "user" if k == 0 else "assistant", f"pulse {i} part {k}",
                       tags=(CONVERSATION_TAG,) if k in (0, 4) else ("step",),
                       pulse_id=f"p{i}", playbook="pb", node=f"n{k}") for k in range(5)]


def reads(store: SQLiteStore) -> list[object]:
    return [store.history("aoi", pulse_id="p3"), store.history("aoi"),
            store.conversation_before("aoi", before=None, after=2, exclude_pulse="p1"),
            store.history("ken", pulse_id="p2")]


def indexes(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'message_tags'")}


def test_an_older_store_reads_the_same_conversation_after_the_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old = Version10(path)
    for i in range(6):
        old.append_many(pulse(i) + pulse(i, "ken"))
    before = reads(old)
    old.close()
    assert "message_tags_lookup" in indexes(path)
    store = SQLiteStore(path)
    try:
        assert reads(store) == before
        assert "message_tags_lookup" not in indexes(path)
        assert "message_tags_conversation" in indexes(path)
        assert store.delete_persona("ken") == 30
        assert store.history("ken") == [] and reads(store)[:3] == before[:3]
    finally:
        store.close()


def test_the_conversation_is_read_through_the_index(tmp_path: Path) -> None:
    def steps(other_tags: int) -> int:
        store = SQLiteStore(tmp_path / f"memory-{other_tags}.db")
        try:
            for i in range(40):
                store.append_many(pulse(i))
            store.append_many([NewMessage("aoi", "assistant", f"step {k}", tags=("step",),
                                          pulse_id="busy") for k in range(other_tags)])
            return sqlite_steps(store, lambda: store.history("aoi", pulse_id="p39"))
        finally:
            store.close()

    assert steps(3000) <= 1.2 * steps(30) + 5
