"""PostgreSQL estimates a word's share of the messages from the planner's statistics of the
texts (``pg_stats``), read once a while, instead of an ``EXPLAIN`` at every search; a
search's ``BEGIN`` brings its persona's number of messages. The estimate steers only how a
word's messages are found: a rare word by its trigram keys, a common one by the newest
rows; with filters, or without statistics, the planner is asked as before."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from saimemory import NewMessage
from saimemory.any_match import WORD_WINDOW, rank_any
from saimemory.migrations import PERSONA_GRAMS_FUNCTION
from saimemory.postgres import PostgresStore, TextStats, keys_cost_less, read_text_stats
from saimemory.search_terms import MatchMode, split_terms
from tests.saimemory.conftest import POSTGRES_DSN

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]


def test_a_share_is_the_planners_histogram_share_plus_the_common_texts() -> None:
    histogram = ("a", *(f"the WEATHER {i}" for i in range(4)), *(f"note {i}" for i in range(6)),
                 "z")
    stats = TextStats(0.1, (("a zeppelin", 0.2), ("weather", 0.1)),
                      tuple(text.lower() for text in histogram))
    # 4 of the 10 inner entries, for the 60 % that are neither null nor common, plus 0.1
    assert stats.share("Weather") == pytest.approx(0.4 * 0.6 + 0.1)
    assert stats.share("zeppelin") == pytest.approx(0.0001 * 0.6 + 0.2)
    assert stats.share("nothing") == pytest.approx(0.0001 * 0.6)  # never believed 0
    assert TextStats(0.0, (), ("x",) * 12).share("x") == pytest.approx(0.9999)


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The text of every statement the store's connections send, in order."""
    sent: list[str] = []
    execute = psycopg.Connection.execute

    def recorded(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(query if isinstance(query, str) else query.as_string(self))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", recorded)
    yield sent


def filled(store: PostgresStore) -> None:
    # more messages than a word's list holds (WORD_WINDOW): a common word's are walked
    store.append_many([NewMessage(p, "user", f"note {i} of {p} about the weather")
                       for i in range(3000) for p in ("aoi", "ken")])
    store.append(NewMessage("aoi", "user", "a rare zeppelin about the weather"))
    with store._write("aoi") as tx:
        tx.run("ANALYZE messages")


def test_an_analyzed_store_estimates_without_explain(
    pg: tuple[Any, str], statements: list[str]
) -> None:
    store: PostgresStore = pg[0]
    filled(store)
    with store._read() as tx:
        stats = read_text_stats(tx, pg[1])
    assert stats is not None
    assert stats.share("zeppelin") < 0.01 < 0.9 < stats.share("weather")
    store.search("aoi", "note")  # the statistics read once
    statements.clear()
    hits = store.search("aoi", "Zeppelin about", match="any", limit=3)
    assert [hit.message.content for hit in hits][0] == "a rare zeppelin about the weather"
    assert len(hits) == 3
    assert not any("EXPLAIN" in sql for sql in statements), statements
    # the start, the lists, the hits' rows and the end; the count came with the start
    assert len(statements) == 4, statements
    assert "persona_counts" in statements[0] and "force_custom_plan" in statements[0]
    lists = statements[1]
    assert lists.count(PERSONA_GRAMS_FUNCTION) == 2, lists  # the rare word's keys only
    statements.clear()
    assert [hit.message.content for hit in store.search("aoi", "zeppelin")] == [
        "a rare zeppelin about the weather"]
    assert not any("EXPLAIN" in sql for sql in statements), statements
    assert any(PERSONA_GRAMS_FUNCTION in sql for sql in statements), statements
    statements.clear()
    assert len(store.search("aoi", "weather", limit=2000)) == 2000
    assert not any(PERSONA_GRAMS_FUNCTION in sql for sql in statements), statements


def test_filters_or_no_statistics_ask_the_planner(
    pg: tuple[Any, str], statements: list[str]
) -> None:
    store: PostgresStore = pg[0]
    store.append_many([NewMessage("aoi", "user", f"note {i} about the weather",
                                  tags=("odd",) if i % 2 else ()) for i in range(40)])
    with store._read() as tx:
        assert read_text_stats(tx, pg[1]) is None  # not analyzed: no histogram
    assert len(store.search("aoi", "weather", limit=100)) == 40
    assert any("EXPLAIN" in sql for sql in statements), statements
    with store._write("aoi") as tx:
        tx.run("ANALYZE messages")
    store._text_stats = None  # as when the statistics are read again, a while later
    statements.clear()
    assert len(store.search("aoi", "weather the", limit=100, match="any")) == 40
    assert not any("EXPLAIN" in sql for sql in statements), statements
    statements.clear()
    assert len(store.search("aoi", "weather the", tags=("odd",), limit=100,
                            match="any")) == 20
    assert any("EXPLAIN" in sql for sql in statements), statements


def test_the_hits_are_the_same_whichever_way_the_words_are_found(pg: tuple[Any, str]) -> None:
    store: PostgresStore = pg[0]
    filled(store)
    store.append_many([NewMessage("aoi", "user", f"Zeppelin {i} in the weather report")
                       for i in range(30)])
    queries: list[tuple[str, MatchMode]] = [
        ("zeppelin", "all"), ("weather", "all"), ("rare zeppelin", "all"),
        ("Zeppelin about", "any"), ("what about the weather report?", "any"),
        ("note 12 zeppelin", "any"), ("nothing here", "any")]

    def hits() -> list[list[tuple[int, float]]]:
        return [[(hit.message.id, hit.rank) for hit in store.search(
            "aoi", query, match=mode, limit=20)] for query, mode in queries]

    store._text_stats = None
    estimated = hits()
    assert store._text_stats is not None and store._text_stats[1] is not None
    store._text_stats = (store._text_stats[0], None)  # the planner asked instead
    assert hits() == estimated
    assert all(estimated[:-1])


def test_the_keys_are_taken_while_they_read_less_than_the_walk() -> None:
    assert keys_cost_less(2000, 2000, 10_000)  # at most the limit: every match is needed
    # a word in a quarter of 10,000 messages: the walk reads 8,000 rows, the keys 2,500
    assert keys_cost_less(2500, 2000, 10_000)
    assert not keys_cost_less(4000, 2000, 10_000)  # the walk: 5,000 rows, the keys 4,000
    assert not keys_cost_less(9999, 2000, 10_000)


def test_common_stop_words_lists_are_left_unread_and_rank_the_same(
    pg: tuple[Any, str], statements: list[str]
) -> None:
    store: PostgresStore = pg[0]
    filled(store)
    store.search("aoi", "note")  # the statistics read once
    query = "What about the weather?"
    statements.clear()
    hits = store.search("aoi", query, match="any", limit=10)
    lists = [sql for sql in statements if "array_agg" in sql]
    # "about" and "the", in every message, would be walked: only "what" and "weather" are
    # read, in one statement
    assert len(lists) == 1 and lists[0].count("array_agg") == 2, lists
    terms = split_terms(query, "any")
    with store._read() as tx:  # the rank with every word's list read
        every = rank_any(
            terms, lambda words: store._word_lists(tx, "aoi", words, ("", []), WORD_WINDOW),
            lambda ids: store._contents(tx, ids), 10, collection=store._collection(tx, "aoi"))
    assert [(hit.message.id, hit.rank) for hit in hits] == every
    assert hits[0].message.content == "a rare zeppelin about the weather"
    statements.clear()
    few = store.search("aoi", "zeppelin about the", match="any", limit=10)
    # the content word fills fewer than ten hits: every list is read, in one statement
    assert len([sql for sql in statements if "array_agg" in sql]) == 1
    assert few[0].message.content == "a rare zeppelin about the weather" and len(few) == 10
