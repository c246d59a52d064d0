"""PostgreSQL migration 13: the functions of the messages' index keys (short pieces,
migration 8; persona trigram keys, migration 10) are PL/pgSQL, planned once a session,
and give the very keys their SQL versions gave, so the indexes built with those stay
right; a store of version 12 gains them without rebuilding an index."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from saimemory import NewMessage
from saimemory.migrations import (
    PERSONA_GRAMS_BODY,
    PERSONA_GRAMS_FUNCTION,
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
