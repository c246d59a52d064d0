"""SQLite's trigram index keeps no size of each message (migration 13): no search uses
them, and an append no longer writes one. An older store finds the same after the upgrade."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from saimemory import NewMessage
from saimemory.migrations import SQLITE_MIGRATIONS
from saimemory.sqlite import SQLiteStore
from tests.saimemory.older import Version12

TEXTS = ("東京タワーの夜景", "the weather today", "猫と東京タワー", "The Weather of Tokyo",
         "quantum physics and the weather", "夜景と猫")


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}


def reads(store: SQLiteStore) -> list[object]:
    return [[(h.message.id, h.rank, h.snippet) for h in
             store.search(persona, query, match=match, limit=50)]
            for persona in ("aoi", "ken")
            for query in ("東京タワー", "weather", "夜景 猫", "the weather of", "WEATHER")
            for match in ("all", "any")]


def test_an_older_store_finds_the_same_after_the_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old = Version12(path)
    for persona in ("aoi", "ken"):
        old.append_many([NewMessage(persona, "user", f"{TEXTS[i % len(TEXTS)]} {i}")
                         for i in range(200)])
    before = reads(old)
    old.close()
    assert "messages_fts_docsize" in tables(path)
    store = SQLiteStore(path)
    try:
        assert store.schema_version() == SQLITE_MIGRATIONS[-1].version
        assert "messages_fts_docsize" not in tables(path)
        assert reads(store) == before
        store._conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')")
        store.append(NewMessage("aoi", "user", "東京タワーに登った"))
        store.delete_persona("ken")
        store._conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')")
        assert store.search("aoi", "東京タワー", limit=1)[0].message.content == "東京タワーに登った"
        assert store.search("ken", "weather") == []
    finally:
        store.close()
