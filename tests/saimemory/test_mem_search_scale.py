"""Search stays per persona at scale: what one persona's search reads does not grow with the
messages of the other personas sharing the store."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from saimemory import NewMessage
from saimemory.search_terms import RANK_WINDOW
from saimemory.sqlite import PAGE_CACHE_KIB, SQLiteStore

MINE = [NewMessage("aoi", "user", f"aoi's note {i}: the weather was mild") for i in range(30)]
OTHERS = [
    NewMessage(f"p{i % 10}", "user", f"note {i} of another persona about the weather")
    for i in range(3000)
]


def sqlite_steps(store: SQLiteStore, search: Callable[[], object]) -> int:
    """How many SQLite virtual-machine steps (in fifties) ``search`` takes on ``store``."""
    count = 0

    def tick() -> int:
        nonlocal count
        count += 1
        return 0  # go on

    conn = store._conn  # instrumentation of the real connection, nothing replaced
    conn.set_progress_handler(tick, 50)
    try:
        search()
    finally:
        conn.set_progress_handler(None, 0)
    return count


@pytest.fixture
def alone_and_crowded(tmp_path: Path) -> Iterator[tuple[SQLiteStore, SQLiteStore]]:
    """aoi's messages alone in one store; in the other, the oldest under 3,000 newer matches
    of ten other personas (what a search walking the whole index newest first reads first)."""
    alone = SQLiteStore(tmp_path / "alone.db")
    crowded = SQLiteStore(tmp_path / "crowded.db")
    alone.append_many(MINE)
    crowded.append_many(MINE)
    crowded.append_many(OTHERS)
    yield alone, crowded
    alone.close()
    crowded.close()


@pytest.mark.parametrize(
    ("query", "match"),
    [("weather", "all"), ("mild weather", "all"), ("was the weather mild?", "any")],
)
def test_a_search_reads_only_its_personas_part_of_the_index(
    alone_and_crowded: tuple[SQLiteStore, SQLiteStore], query: str, match: str
) -> None:
    # before: the crowded search stepped through the other personas' 3,000 matches (about
    # 60 times the steps of the lone one)
    alone, crowded = alone_and_crowded
    found = [h.message.content for h in crowded.search("aoi", query, match=match, limit=50)]
    assert sorted(found) == sorted(m.content for m in MINE)
    lone = sqlite_steps(alone, lambda: alone.search("aoi", query, match=match, limit=50))
    shared = sqlite_steps(crowded, lambda: crowded.search("aoi", query, match=match, limit=50))
    assert shared <= 2 * lone + 20, (lone, shared)


def test_a_connection_caches_the_pages_a_search_of_many_matches_reads(tmp_path: Path) -> None:
    # before: SQLite's default 2 MiB, fewer pages than a common word's 2,000 matches spread
    # over a file shared by 100 personas, read again from the OS at every search
    path = tmp_path / "memory.db"
    for verify in (True, False):  # created, then opened again
        store = SQLiteStore(path, verify=verify)
        try:
            cache = store._conn.execute("PRAGMA cache_size").fetchone()[0]
            assert cache == -PAGE_CACHE_KIB  # KiB, as a negative size means
            assert PAGE_CACHE_KIB * 1024 >= 4096 * 2 * RANK_WINDOW
        finally:
            store.close()


def test_a_persona_deleted_and_written_again_finds_only_its_new_messages(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        store.append_many(MINE)
        store.append(NewMessage("ren", "user", "ren on the weather"))
        assert store.delete_persona("aoi") == len(MINE)
        assert store.search("aoi", "weather") == []
        again = store.append(NewMessage("aoi", "user", "a new start, whatever the weather"))
        assert [h.message.id for h in store.search("aoi", "weather")] == [again.id]
        assert [h.message.content for h in store.search("ren", "weather")] == [
            "ren on the weather"]
    finally:
        store.close()


POSTGRES_DSN = os.environ.get("SEA_TEST_POSTGRES_DSN")


def postgres_test(test: Callable[..., None]) -> Callable[..., None]:
    """Marked ``postgres``, skipped without a server."""
    skip = pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
    marked: Callable[..., None] = pytest.mark.postgres(skip(test))
    return marked


@postgres_test
def test_postgres_searches_through_trigram_keys_led_by_the_persona(pg: tuple[Any, str]) -> None:
    store, schema = pg
    store.append_many(MINE[:3])
    assert [h.message.content for h in store.search("aoi", "weather")] != []
    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN) as conn:
        indexes = dict(conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes "
            "WHERE schemaname = %s AND tablename = 'messages'", (schema,)).fetchall())
    # neither pg_trgm index is kept (the one over every persona, then migration 7's led by
    # the persona): each trigram's key holds its persona (migration 10)
    assert "messages_content_trgm" not in indexes
    assert "messages_persona_content_trgm" not in indexes
    assert not [name for name, definition in indexes.items() if "gin_trgm_ops" in definition]
    definition = indexes["messages_persona_grams"]
    assert re.search(r"USING gin \((\w+\.)?sea_persona_grams\(persona, content\)\)", definition)


@postgres_test
def test_postgres_matches_a_short_word_outside_the_trigram_index(pg: tuple[Any, str]) -> None:
    # before: `content ILIKE '%彗星%'` went into the persona-led trigram index, which has no
    # trigram to look up for two characters and read all of itself (2.2 s at 1M messages)
    store, schema = pg
    store.append_many([*MINE[:3], NewMessage("aoi", "user", "彗星を見た")])
    assert [h.message.content for h in store.search("aoi", "彗星")] == ["彗星を見た"]
    condition = type(store)._short_like.replace("?", "%s")
    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN) as conn:
        conn.execute(f'SET search_path = "{schema}", public')
        conn.execute("SET enable_seqscan = off")  # an index, if any can serve
        for name in ("messages_persona", "messages_thread", "messages_pulse",
                     "messages_time", "messages_uid"):  # leave the trigram index to it
            conn.execute(f"DROP INDEX {name}")  # in this transaction, rolled back
        plan = [row[0] for row in conn.execute(
            f"EXPLAIN SELECT m.id FROM messages m WHERE m.persona = %s AND {condition}",
            ("aoi", "%彗星%")).fetchall()]
    conditions = [line for line in plan if "Index Cond" in line]
    assert conditions, plan
    assert not any("content" in line for line in conditions), plan
