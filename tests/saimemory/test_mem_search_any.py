"""The ``any`` search mode for natural-language queries (every backend)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from saimemory import NewMessage
from saimemory.any_match import WORD_WINDOW
from saimemory.errors import InvalidQueryError
from saimemory.search_terms import MAX_TERMS, split_terms
from saimemory.sqlbase import SqlStore
from saimemory.sqlite import FULL_STOPS_KEPT, SQLiteStore, note_full_stops

T0 = datetime(2025, 3, 1, tzinfo=UTC)
CHAT = [
    "My name is Ken.",
    "What a lovely name you have.",
    "What is the time?",
    "What should we cook tonight?",
    "what is my favourite colour",
    "Tell me about the weather.",
    "What happened yesterday?",
]


def fill(store: SqlStore, texts: list[str], *, tag: str = "conversation") -> list[int]:
    start = len(store.recent("alice", limit=1000))
    return [
        store.append(NewMessage("alice", "user", text, tags=(tag,),
                                created_at=T0 + timedelta(days=start + i))).id
        for i, text in enumerate(texts)
    ]


def found(store: SqlStore, query: str, **kwargs: object) -> list[str]:
    """Contents of the hits of an any-mode search, best first."""
    hits = store.search("alice", query, match="any", **kwargs)  # type: ignore[arg-type]
    return [hit.message.content for hit in hits]


def test_punctuation_around_words_is_ignored(store: SqlStore) -> None:
    fill(store, ["My name is Ken.", "東京タワーの夜景", "抹茶が好き"])
    assert store.search("alice", "name?") == []  # the all mode takes words as written
    assert found(store, "name?") == ["My name is Ken."]
    assert found(store, "...Ken!!") == ["My name is Ken."]
    assert found(store, "「東京タワー」？") == ["東京タワーの夜景"]
    assert found(store, "抹茶！！ 、") == ["抹茶が好き"]


def test_one_word_suffices(store: SqlStore) -> None:
    fill(store, ["The quick brown fox.", "A lazy dog sleeps.", "Nothing here."])
    assert store.search("alice", "zebra brown") == []
    assert found(store, "zebra brown") == ["The quick brown fox."]
    assert sorted(found(store, "fox, dog?")) == ["A lazy dog sleeps.", "The quick brown fox."]
    assert found(store, "zebra giraffe") == []


def test_rare_words_outrank_common_ones_then_newest_first(store: SqlStore) -> None:
    fill(store, CHAT)
    assert found(store, "What is my name?") == [
        "My name is Ken.",  # name, and is, my (each as much as the commonest word, what)
        "What a lovely name you have.",  # name and what
        "what is my favourite colour",  # what (is, my)
        "What is the time?",  # what (is)
        "What happened yesterday?",  # what, newer than the next one
        "What should we cook tonight?",
    ]


def test_a_rare_word_beats_many_newer_common_ones(store: SqlStore) -> None:
    fill(store, ["My name is Ken."])
    fill(store, [f"What is my plan for day {i}?" for i in range(30)])
    hits = store.search("alice", "What is my name?", match="any", limit=3)
    assert [hit.message.content for hit in hits][0] == "My name is Ken."
    assert hits[0].rank > hits[1].rank >= hits[2].rank


def test_function_words_weigh_less_than_a_content_word(store: SqlStore) -> None:
    fill(store, [
        "We went hiking in the Alps.",
        "I love hiking.",
        "What did we decide about dinner?",
        "Did you read the news about the election?",
        "We should meet more often.",
    ])
    # "did", "we", "about" are as rare here as "hiking", but only "hiking" (and "talk",
    # found nowhere) says what is looked for; "we" still orders the two hiking messages
    hits = store.search("alice", "Did we talk about hiking?", match="any")
    assert [hit.message.content for hit in hits] == [
        "We went hiking in the Alps.",  # hiking, we
        "I love hiking.",  # hiking
        "What did we decide about dinner?",  # did, we, about
        "Did you read the news about the election?",  # did, about
    ]
    ranks = [hit.rank for hit in hits]
    assert ranks[0] > ranks[1] > ranks[2] > ranks[3] > 0
    assert ranks[1] > ranks[2] + ranks[3]  # one content word outweighs every stop word
    # a query of function words only weighs them as any words: the rarer first
    assert found(store, "did you?") == [
        "Did you read the news about the election?", "What did we decide about dinner?"]


def test_a_short_content_word_outweighs_function_words(store: SqlStore) -> None:
    fill(store, ["東京はどう？ What do you think.", "What about the weather, what about lunch?"])
    assert found(store, "What about 東京?") == [
        "東京はどう？ What do you think.",  # 東京 (a content word), what
        "What about the weather, what about lunch?",  # what, about (both stop words)
    ]


def test_short_words_only_rank_what_longer_words_found(store: SqlStore) -> None:
    fill(store, ["It is raining.", "My name is Ken."])
    assert found(store, "name is") == ["My name is Ken."]
    assert found(store, "is my") == ["My name is Ken.", "It is raining."]


def test_tag_and_time_filters_still_apply(store: SqlStore) -> None:
    ids = fill(store, CHAT)
    fill(store, ["<system>note: the user's name is Ken</system>"], tag="note")
    assert found(store, "What is my name?", tags=["note"]) == [
        "<system>note: the user's name is Ken</system>"
    ]
    assert "<system>note: the user's name is Ken</system>" not in found(
        store, "What is my name?", tags=["conversation"])
    since = T0 + timedelta(days=2)
    assert found(store, "What is my name?", since=since, tags=["conversation"]) == [
        "what is my favourite colour",
        "What is the time?",
        "What happened yesterday?",
        "What should we cook tonight?",
    ]
    assert found(store, "What is my name?", until=T0 + timedelta(days=1)) == ["My name is Ken."]
    assert found(store, "is my", since=since, tags=["conversation"]) == [
        "what is my favourite colour", "What is the time?"]
    assert len(ids) == len(CHAT)


def test_japanese(store: SqlStore) -> None:
    fill(store, ["今日は東京タワーに行きました。", "猫が窓辺で昼寝をしている。",
                 "明日は京都で抹茶を飲む。"])
    assert found(store, "東京") == ["今日は東京タワーに行きました。"]
    assert found(store, "東京？") == ["今日は東京タワーに行きました。"]
    assert found(store, "東京タワーに行きました") == ["今日は東京タワーに行きました。"]
    # a sentence without spaces is searched by its trigrams: the message sharing most wins
    assert found(store, "東京タワーはどうだった？")[0] == "今日は東京タワーに行きました。"
    assert found(store, "猫 京都") == ["明日は京都で抹茶を飲む。", "猫が窓辺で昼寝をしている。"]
    assert found(store, "「抹茶」、 昼寝！") == [
        "明日は京都で抹茶を飲む。", "猫が窓辺で昼寝をしている。"]
    assert found(store, "昼寝 猫") == ["猫が窓辺で昼寝をしている。"]


def test_a_japanese_question_finds_the_message_sharing_its_rare_trigrams(
    store: SqlStore,
) -> None:
    fill(store, ["先週、東京タワーの夜景を見た。", "雨の日は本を読む。"]
         + [f"昨日の{food}はどうだった？" for food in ("カレー", "ラーメン", "寿司", "天ぷら")])
    # "どうだった" is in five messages, "東京タワー" in one: the rare words decide
    hits = found(store, "東京タワーはどうだった？")
    assert hits[0] == "先週、東京タワーの夜景を見た。"
    assert "雨の日は本を読む。" not in hits
    assert found(store, "ジョン・スミスさんは？") == []


def test_a_long_question_is_searched_by_its_longest_words(store: SqlStore) -> None:
    fill(store, ["We hiked up Mount Takao in October.", "I am hungry."])
    question = ("Hey, do you remember what I told you last week about the hike we did "
                "with my sister up to Takao in the autumn?")
    assert len(question.split()) > MAX_TERMS
    with pytest.raises(InvalidQueryError, match="at most"):
        store.search("alice", question)
    assert found(store, question) == ["We hiked up Mount Takao in October."]


def test_words_are_stripped_deduplicated_and_split_by_length() -> None:
    terms = split_terms("What is my NAME? name! 「東京」、 ...", "any")
    assert terms.match == "any"
    assert terms.indexed == ("What", "NAME")
    assert terms.short == ("is", "my", "東京")
    assert split_terms("100% it_maybe", "all").all == ("100%", "it_maybe")
    assert split_terms("東京タワーは？", "any").indexed == ("東京タ", "京タワ", "タワー", "ワーは")
    assert split_terms("ジョン・スミス 東京", "any").all == ("ジョン", "スミス", "東京")
    assert split_terms("東京タワーは？", "all").all == ("東京タワーは？",)
    long = split_terms("昨日は友達と一緒に東京タワーに行って夜景を見てとても楽しかったです", "any")
    assert len(long.indexed) <= MAX_TERMS
    assert "".join(gram[0] for gram in long.indexed).startswith("昨は達一")  # every second
    assert long.indexed[-1] == "たです"  # and the last, so every character is covered
    assert split_terms("100% it_maybe", "any").all == ("100", "it_maybe")


@pytest.mark.parametrize(
    ("query", "kwargs", "problem"),
    [
        ("name", {"match": "some"}, "match must be one of all, any, got 'some'"),
        ("name", {"match": "ANY"}, "match must be one of"),
        ("？！ ... 「」", {"match": "any"}, "no words once punctuation is stripped"),
        ("   ", {"match": "any"}, "empty"),
        ("name", {"match": "any", "limit": 0}, "limit"),
        ("name", {"match": "any", "since": T0, "until": T0}, "before"),
    ],
)
def test_bad_any_queries_are_clear_errors(
    store: SqlStore, query: str, kwargs: dict[str, object], problem: str
) -> None:
    with pytest.raises(InvalidQueryError, match=problem):
        store.search("alice", query, **kwargs)  # type: ignore[arg-type]


def test_sqlite_leaves_unread_the_lists_of_stop_words_it_found_common(tmp_path: Path) -> None:
    # SQLite has no statistics of the texts: a stop word whose list a search found full is
    # common, and the next searches read its list only if the rank needs it
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        topics = ["the weather", "the long walk", "the garden", "the old movies"]
        store.append_many([NewMessage("alice", "user", f"note {i} is about {topics[i % 4]}")
                           for i in range(WORD_WINDOW + 500)])
        lists: list[str] = []
        store._conn.set_trace_callback(
            lambda sql: lists.append(sql) if "messages_fts MATCH" in sql else None)
        query = "What about the weather?"
        first = store.search("alice", query, match="any", limit=10)
        assert len(lists) == 4  # every word's list: "about" and "the" fill theirs
        lists.clear()
        again = store.search("alice", query, match="any", limit=10)
        assert len(lists) == 2  # "what" and "weather" only
        assert [(h.message.id, h.rank) for h in again] == [(h.message.id, h.rank) for h in first]
        assert all("the weather" in hit.message.content for hit in again)
        lists.clear()
        filtered = store.search("alice", query, match="any", limit=10, tags=("nothing",))
        assert filtered == [] and len(lists) == 4  # filters: every list, as before
    finally:
        store.close()


def test_the_noted_common_stop_words_are_the_latest_and_bounded() -> None:
    kept: dict[str, frozenset[str]] = {}
    note_full_stops(kept, "a", {"the": [1] * 3, "about": [1] * 3, "cat": [1] * 3}, 3)
    assert kept == {"a": {"the", "about"}}  # content words are not noted
    note_full_stops(kept, "a", {"the": [1] * 2, "what": [1] * 3}, 3)
    assert kept == {"a": {"about", "what"}}  # "the" no longer fills its list
    note_full_stops(kept, "b", {"what": [1]}, 3)
    assert "b" not in kept
    for n in range(FULL_STOPS_KEPT + 5):
        note_full_stops(kept, f"p{n}", {"the": [1] * 3}, 3)
    assert len(kept) == FULL_STOPS_KEPT and "a" not in kept and "p0" not in kept
    note_full_stops(kept, "p5", {"what": [1] * 3}, 3)  # noted again: the latest
    note_full_stops(kept, "new", {"the": [1] * 3}, 3)
    assert "p5" in kept and "p6" not in kept and kept["p5"] == {"the", "what"}
