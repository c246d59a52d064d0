"""PostgreSQL keeps each persona's number of messages (migration 12) for the ``any``
search's weights: it is always the count of the persona's messages, capped as the count
was, whatever wrote or deleted them (an append, several, an import, a rolled-back write, a
bulk insert, a deletion); a store of version 11 gains the counts of its messages. The
``any`` mode's lists, read in one statement, are those of one query a word."""

from __future__ import annotations

from typing import Any

import pytest

from saimemory import NewMessage
from saimemory.any_match import COLLECTION_CAP, WORD_WINDOW
from saimemory.migrations import COUNT_FUNCTION
from saimemory.postgres import PostgresStore, estimated_rows, holds_word
from saimemory.search_terms import like_pattern, search_filters
from tests.saimemory.conftest import POSTGRES_DSN
from tests.saimemory.test_mem_persona_counts import (
    counted_after_the_store_writes,
    kept_and_counted,
)

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]


def test_the_kept_count_follows_every_write(pg: tuple[Any, str]) -> None:
    store: PostgresStore = pg[0]
    counted_after_the_store_writes(store)
    with store._write("aoi", "ken") as tx:  # one statement over two personas
        tx.run("INSERT INTO messages (persona, thread, role, content, created_us, pulse_id,"
               " scope, metadata, playbook, node, uid) SELECT p, p || ':main', 'user', 'bulk',"
               " 0, '', '', '{}', '', '', p || i FROM unnest(ARRAY['aoi', 'ken']) AS p,"
               " generate_series(1, 5) AS i")
        tx.run("UPDATE messages SET persona = 'ken', thread = 'ken:main'"
               " WHERE persona = 'aoi' AND uid = 'aoi1'")
    assert kept_and_counted(store, "aoi") == (7, 7)
    assert kept_and_counted(store, "ken") == (7, 7)
    import psycopg
    from psycopg import sql as pgsql

    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as other:  # another search_path
        other.execute(pgsql.SQL("DELETE FROM {}.messages WHERE uid = 'ken1'").format(
            pgsql.Identifier(pg[1])))
    assert kept_and_counted(store, "ken") == (6, 6)
    store.delete_persona("aoi")
    assert kept_and_counted(store, "aoi") == (0, 0)
    store.append(NewMessage("aoi", "user", "again"))
    assert kept_and_counted(store, "aoi") == (1, 1)
    assert kept_and_counted(store, "ken") == (6, 6)


def test_the_kept_count_is_capped_as_the_count_was(pg: tuple[Any, str]) -> None:
    store: PostgresStore = pg[0]
    store.append(NewMessage("aoi", "user", "note"))  # the persona and its main thread
    with store._write("aoi") as tx:  # the rest in one statement: an append each took 20 s
        tx.run("INSERT INTO messages (persona, thread, role, content, created_us, scope,"
               " metadata, uid) SELECT 'aoi', 'aoi:main', 'user', 'note ' || i, i, '', '{}',"
               " 'u' || i FROM generate_series(1, ?) AS i", [COLLECTION_CAP + 2])
    assert kept_and_counted(store, "aoi") == (COLLECTION_CAP, COLLECTION_CAP)


def test_a_store_of_version_11_gains_the_counts_of_its_messages(pg: tuple[Any, str]) -> None:
    store, schema = pg
    store.append_many([NewMessage(p, "user", f"note {i}") for i in range(7) for p in ("a", "b")])
    store.append(NewMessage("a", "user", "one more"))
    with store._write("a") as tx:
        for event in ("insert", "delete", "update"):
            tx.run(f"DROP TRIGGER messages_count_{event} ON messages")
        tx.run(f"DROP FUNCTION {COUNT_FUNCTION}")
        tx.run("DROP TABLE persona_counts")
        tx.run("DELETE FROM schema_migrations WHERE version >= 12")
    assert POSTGRES_DSN is not None
    again = PostgresStore(POSTGRES_DSN, schema=schema)
    try:
        assert again.schema_version() == again.migrations[-1].version >= 12
        assert kept_and_counted(again, "a") == (8, 8)
        assert kept_and_counted(again, "b") == (7, 7)
        again.append(NewMessage("b", "user", "and one"))
        assert kept_and_counted(again, "b") == (8, 8)
    finally:
        again.close()


def test_the_word_lists_are_those_of_a_query_a_word(pg: tuple[Any, str]) -> None:
    store: PostgresStore = pg[0]
    words = ("note", "weather", "TOKYO", "東京タワー", "zeppelin", "nothing")
    store.append_many([NewMessage("aoi", "user", f"note {i}" + " about the Weather" * (i % 3 == 0)
                                  + " in Tokyo" * (i % 7 == 0) + " 東京タワー" * (i % 5 == 0),
                                  tags=("odd",) if i % 2 else ())
                       for i in range(300)] + [NewMessage("aoi", "user", "a zeppelin")])
    with store._write("aoi") as tx:
        tx.run("ANALYZE messages")
    for filters in (("", []), search_filters(("odd",), None, None)):
        for window in (10, 50, WORD_WINDOW):
            with store._read() as tx:
                lists = store._word_lists(tx, "aoi", words, filters, window)
                assert store._collection(tx, "aoi") == 301
                for word in words:
                    assert lists[word] == store._match_ids(tx, "aoi", word, filters, window)
        with store._read() as tx:  # one EXPLAIN estimates each part as it alone would
            parts = [(f"SELECT 1 FROM messages m WHERE m.persona = ? AND "
                      f"{holds_word(word, planning=True)} {filters[0]}",
                      ["aoi", like_pattern(word), *filters[1]]) for word in words]
            assert estimated_rows(tx, " UNION ALL ".join(sql for sql, _ in parts),
                                  [value for _, values in parts for value in values]) == [
                estimated_rows(tx, sql, values)[0] for sql, values in parts]
