"""SQLite writes its index of short words every few messages of a persona, not at every
append (migration 12): the messages it does not hold yet are read by ``LIKE`` with the
newest ones, so a search finds exactly what it found when every append wrote the index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saimemory import NewMessage
from saimemory.migrations import (
    SHORT_INDEX_LAG,
    SQLITE_MIGRATIONS,
    Migration,
    upgrade,
)
from saimemory.schema_sqlite import sqlite_one_trigger_each as _sqlite_one_trigger_each
from saimemory.sqlite import SQLiteStore, _SqliteTx
from tests.saimemory.older import Version11
from tests.saimemory.test_mem_short_words import check_short_search, texts_st, word_st

LAG = 4


class SmallLag(SQLiteStore):
    """Migration 12 with a lag of four, and a walk of three newest messages: a search
    meets messages the index holds, messages it does not, and the walk."""

    migrations = (
        *SQLITE_MIGRATIONS[:11],
        Migration(12, SQLITE_MIGRATIONS[11].name, _sqlite_one_trigger_each(LAG)),
        *SQLITE_MIGRATIONS[12:],
    )
    _short_walk = 3


@pytest.fixture
def small(tmp_path: Path) -> Iterator[SmallLag]:
    store = SmallLag(tmp_path / "memory.db")
    yield store
    store.close()


def check_indexes(store: SQLiteStore) -> None:
    """Both full-text indexes hold exactly their content's entries (FTS5's own check: the
    index of short words against the messages it should hold so far)."""
    for table in ("messages_fts", "messages_short"):
        store._conn.execute(f"INSERT INTO {table} ({table}) VALUES ('integrity-check')")


def pending(store: SQLiteStore) -> dict[str, tuple[int, int]]:
    """Each persona's (messages the index of short words lacks, the count kept of them)."""
    return {persona: (lacking, kept) for persona, lacking, kept in store._conn.execute(
        "SELECT c.persona, (SELECT count(*) FROM messages m WHERE m.persona = c.persona"
        " AND m.id > c.short_through), c.short_pending FROM persona_counts c")}


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_st, words=st.lists(word_st, min_size=1, max_size=3, unique=True))
def test_short_words_are_found_whether_the_index_holds_their_message_yet(
    small: SmallLag, texts: list[str], words: list[str]
) -> None:
    check_short_search(small, texts, words)
    check_indexes(small)
    assert all(lacking <= kept < LAG for lacking, kept in pending(small).values())


def test_a_persona_s_messages_are_indexed_in_batches(small: SmallLag) -> None:
    for i in range(2 * LAG + 1):
        small.append(NewMessage("aoi", "user", f"猫 {i}"))
        small.append(NewMessage("ken", "user", f"犬 {i}"))
        lacking = (i + 1) % LAG
        assert pending(small) == {"aoi": (lacking, lacking), "ken": (lacking, lacking)}
    check_indexes(small)
    assert [h.message.content for h in small.search("aoi", "猫", limit=3)] == [
        "猫 8", "猫 7", "猫 6"]


def test_an_append_writes_no_segment_of_the_index_of_short_words(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        store.append(NewMessage("aoi", "user", "first"))

        def rows() -> int:
            return int(store._conn.execute("SELECT count(*) FROM messages_short_data")
                       .fetchone()[0])

        before = rows()
        for i in range(SHORT_INDEX_LAG - 2):
            store.append(NewMessage("aoi", "user", f"猫 {i}"))
        assert rows() == before
        assert [h.message.content for h in store.search("aoi", "猫", limit=1)] == [
            f"猫 {SHORT_INDEX_LAG - 3}"]
    finally:
        store.close()


def test_the_walk_reads_no_more_than_before() -> None:
    # the messages the index lacks are among a persona's newest SHORT_INDEX_LAG, which
    # the walk of the newest messages reads anyway
    assert SHORT_INDEX_LAG < SQLiteStore._short_walk


def test_deletes_and_edits_keep_the_indexes_exact(small: SmallLag) -> None:
    small.append_many([NewMessage("aoi", "user", f"猫 note {i}") for i in range(10)])
    small.append_many([NewMessage("ken", "user", f"犬 {i}") for i in range(6)])
    small.main_thread("ken")
    conn = small._conn
    # an indexed message and a pending one, edited; two moved to another persona
    conn.execute("UPDATE messages SET content = 'edited 鳥' WHERE id IN (1, 10, 16)")
    conn.execute("UPDATE messages SET persona = 'ken', thread = 'ken:main' WHERE id IN (2, 9)")
    check_indexes(small)
    assert sorted(h.message.id for h in small.search("aoi", "鳥")) == [1, 10]
    assert sorted(h.message.id for h in small.search("ken", "鳥")) == [16]
    assert sorted(h.message.id for h in small.search("ken", "猫")) == [2, 9]
    assert sorted(h.message.id for h in small.search("aoi", "猫")) == [3, 4, 5, 6, 7, 8]
    assert small.delete_persona("aoi") == 8
    check_indexes(small)
    assert small.search("aoi", "猫") == [] and small.search("aoi", "鳥") == []
    small.append_many([NewMessage("aoi", "user", f"猫 again {i}") for i in range(LAG + 1)])
    check_indexes(small)
    assert len(small.search("aoi", "猫", limit=100)) == LAG + 1


def reads(store: SQLiteStore) -> list[object]:
    return [[(h.message.id, h.rank) for h in store.search(persona, query, match=match)]
            for persona in ("aoi", "ken")
            for query in ("猫", "ok", "猫 ok", "note", "東京タワー")
            for match in ("all", "any")]


def test_an_older_store_finds_the_same_after_the_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old = Version11(path)
    texts = ("猫と散歩", "OK", "東京タワー")
    for persona in ("aoi", "ken"):
        old.append_many([NewMessage(persona, "user", f"{texts[i % 3]} note {i}")
                         for i in range(300)])
    before = reads(old)
    old.close()
    store = SQLiteStore(path)
    try:
        assert store.schema_version() == SQLITE_MIGRATIONS[-1].version
        assert pending(store) == {"aoi": (0, 0), "ken": (0, 0)}
        check_indexes(store)
        assert reads(store) == before
        store.append_many([NewMessage("aoi", "user", f"猫 {i}") for i in range(5)])
        # the upgrade again over itself (a store whose version record was rolled back)
        # keeps what the index lacks as pending
        with store._write() as tx:
            tx.run("DELETE FROM schema_migrations WHERE version >= 12")
            upgrade(tx, SQLITE_MIGRATIONS, store.where)
        assert pending(store)["aoi"] == (5, 5)
        check_indexes(store)
        assert [h.message.content for h in store.search("aoi", "猫", limit=2)] == [
            "猫 4", "猫 3"]
    finally:
        store.close()


def test_the_view_holds_what_the_index_does(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        store.append_many([NewMessage("aoi", "user", f"猫 {i}") for i in range(5)])
        assert _SqliteTx(store._conn).fetch(
            "SELECT count(*) FROM messages_short_source") == [(0,)]
        store._conn.execute("INSERT INTO messages_short (messages_short) VALUES ('rebuild')")
        check_indexes(store)
        assert [h.message.content for h in store.search("aoi", "猫", limit=1)] == ["猫 4"]
    finally:
        store.close()
