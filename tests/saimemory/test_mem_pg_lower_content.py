"""PostgreSQL keeps each message's text in lower case (migration 11) and matches a word
that is not fold-free with ``LIKE`` of the lower-cased pattern on it: exactly the messages
``ILIKE`` finds, however the texts and the words fold (ß, İ, the Kelvin sign, the final
sigma, full-width letters, CJK, the pattern's own escapes); a store of version 10 gains the
column."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saimemory import NewMessage
from saimemory.migrations import LOWER_COLUMN
from saimemory.postgres import PostgresStore, holds_word
from saimemory.search_terms import like_pattern
from tests.saimemory.conftest import POSTGRES_DSN

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]

TEXT = "東京タワー猫5:0- %_\\aAsSßẞKk\u212aİi\u0307ｔＴΣσςΑα"
"""CJK and characters lower case leaves alone, ``LIKE``'s wildcards and escape, and letters
whose lower case changes length, meets other letters or depends on what follows."""

texts_st = st.lists(st.text(TEXT, min_size=1, max_size=20), min_size=1, max_size=15)
words_st = st.lists(st.text(TEXT.replace(" ", ""), min_size=1, max_size=4), min_size=1,
                    max_size=4)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_st, words=words_st, cut=st.integers(0, 17))
def test_the_lower_cased_text_finds_what_ilike_finds(
    pg: tuple[Any, str], texts: list[str], words: list[str], cut: int
) -> None:
    store, _ = pg
    persona = f"p{uuid.uuid4().hex[:12]}"
    store.append_many([NewMessage(persona, "user", text) for text in texts])
    source = texts[cut % len(texts)]
    words = [*words, source[cut % max(1, len(source) - 2):][:3], source.upper()[:4],
             source.lower()[:4]]
    with store._read() as tx:
        assert tx.fetch(  # the column is the server's lower case of the text
            f"SELECT count(*) FROM messages WHERE persona = ? AND {LOWER_COLUMN} IS DISTINCT "
            "FROM lower(content)", [persona])[0][0] == 0
        for word in (w for w in words if w):
            def ids(condition: str, word: str = word) -> list[int]:
                return [row[0] for row in tx.fetch(
                    f"SELECT m.id FROM messages m WHERE m.persona = ? AND {condition} "
                    "ORDER BY m.id", [persona, like_pattern(word)])]

            expected = ids("m.content ILIKE ? ESCAPE '\\'")
            assert ids(holds_word(word)) == expected, word
            assert ids(holds_word(word, planning=True)) == expected, word
            assert ids(store._short_like) == expected, word


def test_a_store_of_version_10_gains_the_lower_cased_text(pg: tuple[Any, str]) -> None:
    store, schema = pg
    store.append_many([NewMessage("aoi", "user", text)
                       for text in ("Straße to TOKYO", "ΣΟΦΙΑ", "東京タワー")])
    with store._write("aoi") as tx:
        tx.run(f"ALTER TABLE messages DROP COLUMN {LOWER_COLUMN}")
        tx.run("DELETE FROM schema_migrations WHERE version >= 11")
    assert POSTGRES_DSN is not None
    again = PostgresStore(POSTGRES_DSN, schema=schema)
    try:
        assert again.schema_version() == again.migrations[-1].version >= 11
        with again._read() as tx:
            assert tx.fetch(f"SELECT {LOWER_COLUMN} FROM messages ORDER BY id") == [
                ("straße to tokyo",), ("σοφια",), ("東京タワー",)]
        assert [h.message.content for h in again.search("aoi", "tokyo")] == ["Straße to TOKYO"]
        assert [h.message.content for h in again.search("aoi", "σοφ")] == ["ΣΟΦΙΑ"]
        again.append(NewMessage("aoi", "user", "Another TOKYO"))
        assert [h.message.content for h in again.search("aoi", "tokyo")] == [
            "Another TOKYO", "Straße to TOKYO"]
    finally:
        again.close()
