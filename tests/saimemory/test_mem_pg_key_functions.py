"""PostgreSQL migrations 13 and 18: the functions of the messages' index keys (short pieces,
migration 8; persona trigram keys, migration 10) are PL/pgSQL, planned once a session,
take time in proportion to the text (migration 18: its characters split once, not cut out
at each position), and give the very keys their SQL versions gave, in the same order, so
the indexes built with those stay right; a store of version 12, or 17, gains them without
rebuilding an index."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from saimemory import NewMessage
from saimemory.migrations import (
    PERSONA_GRAMS_BODY,
    PERSONA_GRAMS_FUNCTION,
    POSTGRES_MIGRATIONS,
    SHORT_KEYS_BODY,
    SHORT_KEYS_FUNCTION,
)
from tests.saimemory.conftest import POSTGRES_DSN

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]

texts_st = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                   max_size=40)


def languages(store: Any, schema: str) -> dict[str, str]:
    with store._read() as tx:
        return dict(tx.fetch(
            "SELECT p.proname, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang"
            " JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ?"
            " AND p.proname IN (?, ?)", [schema, SHORT_KEYS_FUNCTION, PERSONA_GRAMS_FUNCTION]))


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(persona=texts_st, text=texts_st)
@example(persona="aoi", text="東京 タワー\u3000猫\tİK\u212a ßẞ  x")
@example(persona="", text="")
def test_the_functions_give_the_keys_of_their_sql_versions(
    pg: tuple[Any, str], persona: str, text: str
) -> None:
    store, schema = pg
    assert languages(store, schema) == {SHORT_KEYS_FUNCTION: "plpgsql",
                                        PERSONA_GRAMS_FUNCTION: "plpgsql"}
    with store._read() as tx:
        (short, short_sql, grams, grams_sql), = tx.fetch(
            f"SELECT {SHORT_KEYS_FUNCTION}(v.t), {SHORT_KEYS_BODY},"
            f" {PERSONA_GRAMS_FUNCTION}(v.p, v.t), {PERSONA_GRAMS_BODY}"
            " FROM (SELECT ?::text AS p, ?::text AS t) AS v", [persona, text])
    assert short == short_sql
    assert grams == grams_sql


long_texts_st = st.lists(
    st.one_of(st.sampled_from(["東京タワー", "猫", "the weather", " ", "\u3000", "\t", "\n",
                               "  ", "İK", "ß", "e\u0301"]), texts_st),
    max_size=60).map("".join)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=long_texts_st)
@example(text=("今日は東京タワーについて話した。 the weather\u3000is\tnice\n" * 120))
def test_long_texts_get_the_keys_of_the_sql_versions(pg: tuple[Any, str], text: str) -> None:
    store, _ = pg
    with store._read() as tx:
        (short, short_sql, grams, grams_sql), = tx.fetch(
            f"SELECT {SHORT_KEYS_FUNCTION}(v.t), {SHORT_KEYS_BODY},"
            f" {PERSONA_GRAMS_FUNCTION}(v.p, v.t), {PERSONA_GRAMS_BODY}"
            " FROM (SELECT 'aoi'::text AS p, ?::text AS t) AS v", [text])
    assert short == short_sql
    assert grams == grams_sql


def functions_of_migration_13(tx: Any) -> None:
    """The key functions as migration 13 left them."""
    (migration,) = (m for m in POSTGRES_MIGRATIONS if m.version == 13)
    for statement in migration.statements:
        assert isinstance(statement, str)
        tx.run(statement)


def test_a_store_of_version_17_gains_them_and_keeps_its_indexes(pg: tuple[Any, str]) -> None:
    from saimemory.postgres import PostgresStore

    store, schema = pg
    store.append_many([NewMessage("aoi", "user", f"note {i}: 東京タワー 猫 zeppelin{i}")
                       for i in range(30)])
    with store._write("aoi") as tx:
        functions_of_migration_13(tx)
        tx.run("DELETE FROM schema_migrations WHERE version >= 18")
        bodies = tx.fetch("SELECT prosrc FROM pg_proc WHERE proname IN (?, ?)"
                          " AND pronamespace = ?::regnamespace ORDER BY proname",
                          [SHORT_KEYS_FUNCTION, PERSONA_GRAMS_FUNCTION, schema])
        files = tx.fetch("SELECT relname, relfilenode FROM pg_class WHERE relname IN "
                         "('messages_persona_grams', 'messages_persona_short') "
                         "AND relnamespace = ?::regnamespace ORDER BY relname", [schema])
    assert all("substr" in body for (body,) in bodies)  # cut at each position
    queries = ("zeppelin7", "猫", "東京 zeppelin2")
    before = [[(h.message.id, h.rank) for h in store.search("aoi", query, limit=50)]
              for query in queries]
    assert POSTGRES_DSN is not None
    again = PostgresStore(POSTGRES_DSN, schema=schema)
    try:
        assert again.schema_version() == again.migrations[-1].version >= 18
        with again._read() as tx:
            assert not any("substr" in body for (body,) in tx.fetch(
                "SELECT prosrc FROM pg_proc WHERE proname IN (?, ?)"
                " AND pronamespace = ?::regnamespace", [SHORT_KEYS_FUNCTION,
                                                          PERSONA_GRAMS_FUNCTION, schema]))
            assert tx.fetch("SELECT relname, relfilenode FROM pg_class WHERE relname IN "
                            "('messages_persona_grams', 'messages_persona_short') "
                            "AND relnamespace = ?::regnamespace ORDER BY relname",
                            [schema]) == files
        assert [[(h.message.id, h.rank) for h in again.search("aoi", query, limit=50)]
                for query in queries] == before
        long = again.append(NewMessage("aoi", "user", "今日は東京タワーについて話した。" * 2000))
        assert long.id in {h.message.id for h in again.search("aoi", "タワーについ", limit=50)}
    finally:
        again.close()


def test_a_store_of_version_12_gains_them_and_keeps_its_indexes(pg: tuple[Any, str]) -> None:
    from saimemory.postgres import PostgresStore

    store, schema = pg
    store.append_many([NewMessage("aoi", "user", f"note {i}: 東京タワー 猫 zeppelin{i}")
                       for i in range(30)])
    with store._write("aoi") as tx:
        for name, args, body in ((SHORT_KEYS_FUNCTION, "t text", SHORT_KEYS_BODY),
                                 (PERSONA_GRAMS_FUNCTION, "p text, t text", PERSONA_GRAMS_BODY)):
            tx.run(f"CREATE OR REPLACE FUNCTION {name}({args}) RETURNS "
                   f"{'text[]' if name == SHORT_KEYS_FUNCTION else 'bigint[]'} LANGUAGE sql"
                   f" IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $$ SELECT {body} $$")
        tx.run("DELETE FROM schema_migrations WHERE version >= 13")
        files = tx.fetch("SELECT relname, relfilenode FROM pg_class WHERE relname IN "
                         "('messages_persona_grams', 'messages_persona_short') "
                         "AND relnamespace = ?::regnamespace ORDER BY relname", [schema])
    assert set(languages(store, schema).values()) == {"sql"}
    before = [[(h.message.id, h.rank) for h in store.search("aoi", query, limit=50)]
              for query in ("zeppelin7", "猫", "東京 zeppelin2")]
    assert POSTGRES_DSN is not None
    again = PostgresStore(POSTGRES_DSN, schema=schema)
    try:
        assert again.schema_version() == again.migrations[-1].version >= 13
        assert set(languages(again, schema).values()) == {"plpgsql"}
        with again._read() as tx:
            assert tx.fetch("SELECT relname, relfilenode FROM pg_class WHERE relname IN "
                            "('messages_persona_grams', 'messages_persona_short') "
                            "AND relnamespace = ?::regnamespace ORDER BY relname",
                            [schema]) == files
        queries = ("zeppelin7", "猫", "東京 zeppelin2")
        assert [[(h.message.id, h.rank) for h in again.search("aoi", query, limit=50)]
                 for query in queries] == before
        assert [len(hits) for hits in before] == [1, 30, 11]  # zeppelin2 and zeppelin20 to 29
        added = again.append(NewMessage("aoi", "user", "猫 zeppelin7 again"))
        assert {h.message.id for h in again.search("aoi", "zeppelin7")} == {
            before[0][0][0], added.id}
        assert added.id in {h.message.id for h in again.search("aoi", "猫", limit=50)}
    finally:
        again.close()
