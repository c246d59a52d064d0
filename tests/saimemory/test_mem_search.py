"""Full-text search: Japanese and English, short words, tag and time filters (every backend)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from saimemory import NewMessage
from saimemory.errors import InvalidQueryError
from saimemory.sqlbase import SqlStore

T0 = datetime(2025, 3, 1, tzinfo=UTC)
TEXTS = [
    "今日は東京タワーに行きました。夜景がとても綺麗でした。",
    "猫が窓辺で昼寝をしている。",
    "The quick brown fox jumps over the lazy dog.",
    "明日は京都で抹茶を飲む予定です。",
    "Tokyo Tower at night: 100% worth it_maybe",
]


@pytest.fixture
def filled(store: SqlStore) -> list[int]:
    return [
        store.append(NewMessage("alice", "user", text, created_at=T0 + timedelta(days=i),
                                tags=("conversation",) if i % 2 == 0 else ("note",))).id
        for i, text in enumerate(TEXTS)
    ]


def ids(store: SqlStore, query: str, **kwargs: object) -> list[int]:
    return sorted(h.message.id for h in store.search("alice", query, **kwargs))  # type: ignore[arg-type]


def test_japanese_substrings_are_found(store: SqlStore, filled: list[int]) -> None:
    assert ids(store, "東京タワー") == [filled[0]]
    assert ids(store, "夜景が") == [filled[0]]
    assert ids(store, "抹茶を飲む") == [filled[3]]
    assert ids(store, "存在しない言葉") == []


def test_english_is_found_case_insensitively(store: SqlStore, filled: list[int]) -> None:
    assert ids(store, "brown FOX") == [filled[2]]
    assert ids(store, "tower") == [filled[4]]
    assert ids(store, "fox cat") == []


def test_short_words_use_the_substring_fallback(store: SqlStore, filled: list[int]) -> None:
    assert ids(store, "猫") == [filled[1]]
    assert ids(store, "京") == [filled[0], filled[3]]
    assert ids(store, "東京 夜") == [filled[0]]
    assert ids(store, "京 抹茶を") == [filled[3]]


def test_like_wildcards_in_queries_are_literal(store: SqlStore, filled: list[int]) -> None:
    assert ids(store, "100%") == [filled[4]]
    assert ids(store, "%") == [filled[4]]
    assert ids(store, "_") == [filled[4]]
    assert ids(store, '"quick"') == []
    assert ids(store, "it_maybe") == [filled[4]]


def test_tag_filters_require_every_tag(store: SqlStore, filled: list[int]) -> None:
    assert ids(store, "京", tags=["conversation"]) == [filled[0]]
    assert ids(store, "京", tags=["note"]) == [filled[3]]
    assert ids(store, "京", tags=["note", "conversation"]) == []


def test_time_filters_since_inclusive_until_exclusive(store: SqlStore, filled: list[int]) -> None:
    assert ids(store, "京", since=T0 + timedelta(days=3)) == [filled[3]]
    assert ids(store, "京", until=T0 + timedelta(days=3)) == [filled[0]]
    assert ids(store, "tower", since=T0, until=T0 + timedelta(days=4)) == []


def test_search_is_per_persona_and_limited(store: SqlStore, filled: list[int]) -> None:
    store.append(NewMessage("bob", "user", "東京タワー"))
    assert ids(store, "東京タワー") == [filled[0]]
    for i in range(5):
        store.append(NewMessage("alice", "user", f"repeat 東京 {i}"))
    assert len(store.search("alice", "東京", limit=3)) == 3
    assert len(store.search("alice", "repeat", limit=2)) == 2


def test_hits_carry_a_snippet_and_rank_best_first(store: SqlStore, filled: list[int]) -> None:
    store.append(NewMessage("alice", "user", "dog dog dog dog dog dog"))
    hits = store.search("alice", "dog")
    assert len(hits) == 2
    assert hits[0].rank >= hits[1].rank
    assert all("dog" in h.snippet for h in hits)
    long = store.append(NewMessage("alice", "user", "x" * 500 + " needle " + "y" * 500))
    (hit,) = store.search("alice", "needle")
    assert hit.message.id == long.id and "needle" in hit.snippet and len(hit.snippet) < 200


def add(store: SqlStore, texts: list[str]) -> list[int]:
    """Append ``texts`` for alice, a day apart, oldest first; their ids."""
    return [store.append(NewMessage("alice", "user", text,
                                     created_at=T0 + timedelta(days=i))).id
            for i, text in enumerate(texts)]


def test_all_words_rank_by_occurrences_then_length_then_newest(store: SqlStore) -> None:
    long, same_length, short, many, newer_short = add(store, [
        "dog and a very long sentence about other animals entirely",
        "dog cat cow",
        "a dog",
        "dog dog dog dog",
        "a dog",
    ])
    hits = store.search("alice", "dog")
    assert [hit.message.id for hit in hits] == [many, newer_short, short, same_length, long]
    ranks = [hit.rank for hit in hits]
    assert ranks[0] > ranks[1] == ranks[2] > ranks[3] > ranks[4]
    assert min(ranks) > 0.1  # a real score, not a vanishing 1e-6 printed as 0.000


def test_every_word_of_the_query_adds_to_the_rank(store: SqlStore) -> None:
    once, twice, apart = add(store, [
        "Tokyo Tower at night",
        "tokyo tower, tokyo tower and more tokyo",
        "I saw Tokyo from the tower of another city far away",
    ])
    hits = store.search("alice", "tokyo TOWER")
    assert [hit.message.id for hit in hits] == [twice, once, apart]
    assert hits[0].rank > hits[1].rank > hits[2].rank > 0.1
    kyoto, tower, towers = add(store, [
        "京都の夜景も良いけれど、やはり東京タワーが一番だと思う。",
        "東京タワーの夜景",
        "東京タワー、東京タワー！",
    ])
    hits = store.search("alice", "東京タワー")
    assert [hit.message.id for hit in hits] == [towers, tower, kyoto]
    assert hits[0].rank > hits[1].rank > hits[2].rank > 0.1


def test_a_lone_hit_of_average_length_ranks_one_a_word(store: SqlStore) -> None:
    add(store, ["The quick brown fox jumps over the lazy dog.", "猫が窓辺で昼寝をしている。"])
    for query, rank in (("fox", 1.0), ("brown FOX", 2.0), ("brown fox 猫", None),
                        ("猫", 1.0), ("窓辺 猫", 2.0)):
        hits = store.search("alice", query)
        assert [hit.rank for hit in hits] == ([] if rank is None else [pytest.approx(rank)])
    assert [hit.rank for hit in store.search("alice", "fox?", match="any")] == [
        pytest.approx(1.0)]


@pytest.mark.parametrize(
    ("query", "kwargs", "problem"),
    [
        ("   ", {}, "empty"),
        ("x", {"limit": 0}, "limit"),
        ("x", {"since": datetime(2025, 1, 1)}, "timezone-aware"),
        ("x", {"since": T0, "until": T0}, "before"),
        ("x", {"tags": "conversation"}, "sequence"),
    ],
)
def test_bad_queries_are_clear_errors(
    store: SqlStore, query: str, kwargs: dict[str, object], problem: str
) -> None:
    with pytest.raises(InvalidQueryError, match=problem):
        store.search("alice", query, **kwargs)  # type: ignore[arg-type]
