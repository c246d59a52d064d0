"""Words shorter than three characters (猫, 東京, "ok") are found through an index of their
own, with exactly the hits a substring test of every message gives, on both backends."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saimemory import NewMessage
from saimemory.errors import InvalidQueryError
from saimemory.grams import fold, keys_query, short_keys, word_key
from saimemory.migrations import SHORT_KEYS_FUNCTION, SQLITE_MIGRATIONS
from saimemory.search_terms import split_terms
from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore
from tests.saimemory.conftest import POSTGRES_DSN, StoreFactory
from tests.saimemory.older import Version7
from tests.saimemory.test_mem_search_scale import sqlite_steps

ALPHABET = "aAbB猫東京%_\\🙂. "
"""Letters in both cases, CJK, LIKE's wildcards and escape, an emoji, punctuation, a space."""

texts_st = st.lists(st.text(ALPHABET, min_size=1, max_size=12), min_size=1, max_size=25)
word_st = st.text(ALPHABET.replace(" ", ""), min_size=1, max_size=2)


def holds(content: str, word: str) -> bool:
    """What a short word's hit means: a substring, ASCII letters in either case."""
    return fold(word) in fold(content)


def test_a_texts_keys_are_its_pieces_of_one_and_two_characters_without_whitespace() -> None:
    keys = set(short_keys("Ab 猫!").split())
    expected = {word_key(piece) for piece in ("a", "b", "ab", "猫", "!", "猫!")}
    assert keys == expected
    assert word_key("AB") == word_key("ab") != word_key("Ab猫"[:1])  # "a" alone
    assert short_keys("") == "" and short_keys("  \n") == ""


@pytest.mark.parametrize("word", ["", "abc", "a b", "\t"])
def test_only_a_short_word_has_a_key(word: str) -> None:
    with pytest.raises(ValueError, match="not a short word"):
        word_key(word)


def test_a_keys_query_asks_for_every_word_or_for_one() -> None:
    assert keys_query(["猫", "ab"], any_word=False) == f'"{word_key("猫")}" AND "g61x62"'
    assert keys_query(["猫", "ab"], any_word=True) == f'"{word_key("猫")}" OR "g61x62"'


def check_short_search(store: SqlStore, texts: list[str], words: list[str]) -> None:
    """Every match mode finds exactly the messages a substring test finds, newest first."""
    persona = f"p{uuid.uuid4().hex[:12]}"
    stored = store.append_many([NewMessage(persona, "user", text) for text in texts])
    store.append(NewMessage("someone-else", "user", " ".join(words)))  # never a hit
    query = " ".join(words)
    for match, joined in (("all", all), ("any", any)):
        try:
            terms = split_terms(query, match)  # the any mode strips punctuation
        except InvalidQueryError:
            with pytest.raises(InvalidQueryError):
                store.search(persona, query, match=match)
            continue
        hits = [h.message.id for h in store.search(persona, query, match=match, limit=100)]
        expected = [m.id for m in reversed(stored)
                    if joined(holds(m.content, word) for word in terms.all)]
        if match == "all" or len(terms.all) > 1:
            assert hits == expected, (match, query)  # newest first
        else:  # one word: ranked as in the all mode
            assert sorted(hits) == sorted(expected), (match, query)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_st, words=st.lists(word_st, min_size=1, max_size=3, unique=True))
def test_short_words_find_exactly_the_messages_that_hold_them(
    store: SqlStore, texts: list[str], words: list[str]
) -> None:
    check_short_search(store, texts, words)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_st, words=st.lists(word_st, min_size=1, max_size=3, unique=True))
def test_the_newest_messages_read_and_the_older_ones_looked_up_give_the_same_hits(
    store: SqlStore, texts: list[str], words: list[str]
) -> None:
    store._short_walk = 3  # the store reads its three newest messages, then asks the index
    check_short_search(store, texts, words)


def test_a_short_word_is_found_however_old_its_message(store: SqlStore) -> None:
    store.append(NewMessage("aoi", "user", "東京へ行った"))
    store.append_many([NewMessage("aoi", "user", f"note {i}") for i in range(300)])
    for query, match in (("東京", "all"), ("東京 猫", "any")):
        found = store.search("aoi", query, match=match)
        assert [h.message.content for h in found] == ["東京へ行った"]


def test_a_deleted_personas_short_words_are_gone(open_same: StoreFactory) -> None:
    store = open_same()
    store.append(NewMessage("aoi", "user", "猫がいた"))
    store.delete_persona("aoi")
    assert store.search("aoi", "猫") == []
    store.append(NewMessage("aoi", "user", "犬がいた"))
    assert store.search("aoi", "猫") == []
    assert [h.message.content for h in store.search("aoi", "犬")] == ["犬がいた"]


def _miss_steps(tmp_path: Path, own: int) -> int:
    store = SQLiteStore(tmp_path / f"own-{own}.db")
    try:
        store.append_many([NewMessage("aoi", "user", f"note {i} about the weather")
                           for i in range(own)])
        return sqlite_steps(store, lambda: store.search("aoi", "猫"))
    finally:
        store.close()


def test_a_short_word_that_misses_reads_no_more_of_a_large_history(tmp_path: Path) -> None:
    # before: a short word was a substring test of every one of the persona's messages,
    # so a miss cost in proportion to its history (10 ms at 10,000 messages); now the
    # newest few hundred are read, the older ones looked up
    walk = SQLiteStore._short_walk
    small, large = _miss_steps(tmp_path, 2 * walk), _miss_steps(tmp_path, 20 * walk)
    assert large <= 1.5 * small + 20, (small, large)


def test_an_older_sqlite_store_gains_the_index_of_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old = Version7(path)
    old.append_many([NewMessage("aoi", "user", "猫と散歩"), NewMessage("aoi", "user", "ok")])
    old.close()
    store = SQLiteStore(path)
    try:
        assert store.schema_version() == len(SQLITE_MIGRATIONS)
        assert [h.message.content for h in store.search("aoi", "猫")] == ["猫と散歩"]
        assert [h.message.content for h in store.search("aoi", "OK")] == ["ok"]
    finally:
        store.close()


def test_an_external_writer_without_the_keys_function_is_refused_not_left_stale(
    tmp_path: Path,
) -> None:
    import sqlite3

    path = tmp_path / "memory.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    insert: Callable[[], object] = lambda: conn.execute(  # noqa: E731
        "INSERT INTO messages (persona, thread, role, content, created_us, uid)"
        " VALUES ('aoi', 'aoi:main', 'user', '猫', 0, 'u1')")
    with pytest.raises(sqlite3.OperationalError, match="sea_short_keys"):
        insert()
    conn.close()


@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_postgres_finds_a_rare_short_word_through_its_index(pg: tuple[Any, str]) -> None:
    store, schema = pg
    store.append_many([NewMessage("aoi", "user", f"note {i} about the weather")
                       for i in range(3000)])
    store.append(NewMessage("aoi", "user", "彗星を見た"))
    assert [h.message.content for h in store.search("aoi", "彗星")] == ["彗星を見た"]
    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN) as conn:
        conn.execute(f'SET search_path = "{schema}", public')
        conn.execute("ANALYZE messages")
        plan = "\n".join(row[0] for row in conn.execute(
            f"EXPLAIN SELECT m.id FROM messages m WHERE m.persona = %s AND "
            f"{SHORT_KEYS_FUNCTION}(m.content) @> ARRAY[lower(%s)]::text[] AND "
            f"{type(store)._short_like.replace('?', '%s')} ORDER BY m.id DESC LIMIT 10",
            ("aoi", "彗星", "%彗星%")).fetchall())
    assert "messages_persona_short" in plan, plan
