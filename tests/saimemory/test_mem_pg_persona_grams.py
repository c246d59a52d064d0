"""PostgreSQL looks a word found in few messages up by its persona's trigram keys
(migration 10): every message holding the word holds the keys, so the hits are those of
``LIKE``/``ILIKE`` alone, however the texts fold; a common word keeps the plan of the
newest rows."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from saimemory import NewMessage
from saimemory.migrations import PERSONA_GRAMS_FUNCTION
from saimemory.postgres import few_matches, holds_word
from saimemory.search_terms import like_pattern
from tests.saimemory.conftest import POSTGRES_DSN

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]

TEXT = "東京タワー猫5:0- aAsSßẞKk\u212aİi\u0307ｔＴΣσςΑα"
"""CJK and characters lower case leaves alone, and letters whose lower case changes length,
meets other letters or depends on what follows (the final sigma)."""

texts_st = st.lists(st.text(TEXT, min_size=1, max_size=20), min_size=1, max_size=15)
words_st = st.lists(st.text(TEXT.replace(" ", ""), min_size=3, max_size=4), min_size=1,
                    max_size=3)
KEYS = f"{PERSONA_GRAMS_FUNCTION}(m.persona, m.content) @> {PERSONA_GRAMS_FUNCTION}(?, ?)"


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_st, words=words_st, cut=st.integers(0, 17))
@example(texts=["0  ", "0"], words=["000"], cut=0)  # a cut word of "0" and two spaces
def test_a_message_holding_a_word_holds_its_keys(
    pg: tuple[Any, str], texts: list[str], words: list[str], cut: int
) -> None:
    store, _ = pg
    persona = f"p{uuid.uuid4().hex[:12]}"
    store.append_many([NewMessage(persona, "user", text) for text in texts])
    source = texts[cut % len(texts)]
    words = [*words, source[cut % max(1, len(source) - 2):][:3], source.upper()[:3]]
    with store._read() as tx:
        for word in (w for w in words if len(w) >= 3 and w.split() == [w]):
            holding = (f"FROM messages m WHERE m.persona = ? AND {holds_word(word)}",
                       [persona, like_pattern(word)])
            missing = tx.fetch(f"SELECT m.content {holding[0]} AND NOT ({KEYS})",
                               [*holding[1], persona, word])
            assert missing == [], word
            expected = [row[0] for row in tx.fetch(
                f"SELECT m.id {holding[0]} ORDER BY m.id DESC", holding[1])]
            hits = [hit.message.id for hit in store.search(persona, word, limit=100)]
            assert sorted(hits, reverse=True) == expected, word


def test_a_rare_word_is_looked_up_by_its_keys_and_a_common_one_is_not(
    pg: tuple[Any, str],
) -> None:
    store, _ = pg
    store.append_many([NewMessage(p, "user", f"note {i} of {p} about the weather")
                       for i in range(1500) for p in ("aoi", "ken")])
    store.append(NewMessage("aoi", "user", "a rare zeppelin"))
    with store._write("aoi") as tx:
        tx.run("ANALYZE messages")
    with store._read() as tx:
        def found(word: str) -> tuple[str, list[Any]]:
            return (f"FROM messages m WHERE m.persona = ? AND {holds_word(word)} ",
                    ["aoi", like_pattern(word)])

        assert few_matches(tx, *found("zeppelin"), 2000)
        assert not few_matches(tx, *found("weather"), 1000)
        sql, values = found("zeppelin")
        plan = "\n".join(str(row[0]) for row in tx.fetch(
            f"EXPLAIN SELECT m.id {sql}AND {KEYS} ORDER BY m.id DESC LIMIT 2000",
            [*values, "aoi", "zeppelin"]))
        assert "messages_persona_grams" in plan, plan
    assert [h.message.content for h in store.search("aoi", "Zeppelin")] == ["a rare zeppelin"]
    assert len(store.search("aoi", "weather", limit=2000)) == 1500


def test_a_store_of_version_9_gains_the_keys(pg: tuple[Any, str]) -> None:
    from saimemory.postgres import PostgresStore

    store, schema = pg
    store.append_many([NewMessage("aoi", "user", f"note {i}: 東京タワー") for i in range(3)])
    with store._write("aoi") as tx:
        tx.run("DROP INDEX messages_persona_grams")
        tx.run(f"DROP FUNCTION {PERSONA_GRAMS_FUNCTION}")
        tx.run("DELETE FROM schema_migrations WHERE version >= 10")
    assert POSTGRES_DSN is not None
    again = PostgresStore(POSTGRES_DSN, schema=schema)
    try:
        assert again.schema_version() == again.migrations[-1].version >= 10
        assert [h.message.content for h in again.search("aoi", "note 1: 東京")] == [
            "note 1: 東京タワー"]
    finally:
        again.close()
