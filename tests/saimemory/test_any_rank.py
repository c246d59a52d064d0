"""The any-mode rank reads texts only where its word lists leave a doubt, and ranks exactly as
scoring every candidate's text would."""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

from hypothesis import example, given, settings
from hypothesis import strategies as st

from saimemory.any_match import WordLists, query_weights, rank_any
from saimemory.search_terms import Terms

WORDS = ["cat", "dog", "the", "walk", "rain", "tea"]
SHORT = ["is", "my"]

messages_st = st.lists(
    st.lists(st.sampled_from(WORDS + SHORT + ["CAT", "Tea"]), min_size=1, max_size=5),
    min_size=1, max_size=40,
).map(lambda texts: {i + 1: " ".join(words) for i, words in enumerate(texts)})
query_st = st.tuples(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True),
    st.lists(st.sampled_from(SHORT), max_size=2, unique=True),
)


def lists_of(
    texts: Mapping[int, str], window: int, words: Sequence[str] = WORDS
) -> dict[str, list[int]]:
    """Each word's newest ``window`` ids holding it, newest first (what a backend gives)."""
    return {
        word: sorted((i for i, text in texts.items() if word in text.casefold()),
                     reverse=True)[:window]
        for word in words
    }


def reader(lists: Mapping[str, list[int]], read: list[str] | None = None) -> WordLists:
    """A backend's reads of word lists, each word noted in ``read``."""
    def lists_of_words(words: Sequence[str]) -> dict[str, list[int]]:
        if read is not None:
            read.extend(words)
        return {word: lists[word] for word in words}
    return lists_of_words


def every_text_scored(
    terms: Terms, texts: Mapping[int, str], window: int, limit: int,
    words: Sequence[str] = WORDS,
) -> list[tuple[int, float]]:
    """The rank as defined: every candidate's text scored for every word."""
    lists = lists_of(texts, window, words)
    found = {word: len(lists[word]) for word in terms.indexed}
    weights = query_weights(terms, found, len(texts))
    candidates = {i for word in terms.indexed for i in lists[word]}
    scored = []
    for i in candidates:
        folded = texts[i].casefold()
        score = 0.0
        for word, weight in weights.items():
            if i in lists.get(word, ()) or word.casefold() in folded:
                score += weight
        scored.append((score, i))
    return [(i, score) for score, i in heapq.nlargest(limit, scored)]


@settings(max_examples=300)
@given(messages_st, query_st, st.integers(1, 6), st.integers(1, 5), st.integers(1, 64))
def test_the_rank_is_that_of_every_text_scored(
    texts: dict[int, str], query: tuple[list[str], list[str]], window: int, limit: int,
    batch: int,
) -> None:
    terms = Terms(tuple(query[0]), tuple(query[1]), "any")
    lists = lists_of(texts, window)
    read: list[int] = []

    def contents(ids: list[int]) -> dict[int, str]:
        read.extend(ids)
        return {i: texts[i] for i in ids}

    got = rank_any(terms, reader(lists), contents, limit,
                   collection=len(texts), window=window, batch=batch)
    assert got == every_text_scored(terms, texts, window, limit)
    assert len(read) == len(set(read))  # no text read twice


def test_common_words_read_only_the_texts_that_can_still_rank() -> None:
    # 3,000 messages hold "the" and "walk"; the newest ten hold "rain" too: the lists alone
    # rank them, and no older message can reach them, whatever its text
    texts = {i: "the walk" + (" in the rain" if i > 2990 else "") for i in range(1, 3001)}
    lists = lists_of(texts, 2000)
    read: list[int] = []

    def contents(ids: list[int]) -> dict[int, str]:
        read.extend(ids)
        return {i: texts[i] for i in ids}

    terms = Terms(("the", "walk", "rain"), ("is",), "any")
    got = rank_any(terms, reader(lists), contents, 10, collection=len(texts))
    assert [i for i, _ in got] == list(range(3000, 2990, -1))
    assert got == every_text_scored(terms, texts, 2000, 10)
    assert len(read) <= 10  # before: the text of every one of the 2,000 candidates


def test_thousands_of_texts_to_read_take_a_few_reads() -> None:
    # 2,000 messages hold "the" and "walk" but not "is": each could rank higher than it
    # does until its text is read, so every text is read, best first
    texts = {i: "the walk" for i in range(1, 2001)}
    lists = lists_of(texts, 2000)
    reads: list[int] = []

    def contents(ids: list[int]) -> dict[int, str]:
        reads.append(len(ids))
        return {i: texts[i] for i in ids}

    terms = Terms(("the", "walk"), ("is",), "any")
    got = rank_any(terms, reader(lists), contents, 10, collection=len(texts))
    assert got == every_text_scored(terms, texts, 2000, 10)
    assert sum(reads) == 2000
    assert reads == [64, 128, 256, 512, 1024, 16]  # before: 32 reads of 64


STOP = ["the", "about", "what"]
CONTENT = ["cat", "rain", "walk"]
mixed_st = st.lists(
    st.lists(st.sampled_from(STOP + CONTENT + ["is", "ox", "The"]), min_size=1, max_size=6),
    min_size=1, max_size=60,
).map(lambda texts: {i + 1: " ".join(words) for i, words in enumerate(texts)})


def _barely_more_than_the_window() -> dict[int, str]:
    """61 messages, 59 with "the", for a window of 60: its list is not full, and its weight,
    below the cap, depends on how many hold it."""
    texts = {i: "the" for i in range(1, 58)}
    texts.update({58: "dog", 59: "dog", 60: "cat the", 61: "cat the"})
    return texts


@settings(max_examples=400)
# a message only the stop word's list adds holds a short content word
@example({1: "ox the", 2: "cat", 3: "cat", 4: "about", 5: "about"}, ["cat", "the"], ["ox"],
         {"the"}, 3, 2, 8)
# it holds a content word whose list is full, being older than that list
@example({1: "cat the", 2: "cat", 3: "cat", **{i: "rain" for i in range(4, 8)}},
         ["cat", "rain", "the"], [], {"the"}, 2, 3, 8)
# the stop word's weight, below its cap, comes from its list
@example(_barely_more_than_the_window(), ["cat", "the"], [], {"the"}, 60, 2, 8)
@given(mixed_st, st.lists(st.sampled_from(STOP + CONTENT), min_size=1, max_size=5, unique=True),
       st.lists(st.sampled_from(["is", "ox"]), max_size=2, unique=True),
       st.sets(st.sampled_from(STOP + CONTENT)), st.integers(1, 8), st.integers(1, 6),
       st.integers(1, 16))
def test_lists_left_unread_change_no_rank(
    texts: dict[int, str], indexed: list[str], short: list[str], deferrable: set[str],
    window: int, limit: int, batch: int,
) -> None:
    # whichever words a backend finds costly, the rank is that of every text scored
    terms = Terms(tuple(indexed), tuple(short), "any")
    lists = lists_of(texts, window, STOP + CONTENT)
    read: list[int] = []
    words_read: list[str] = []

    def contents(ids: list[int]) -> dict[int, str]:
        read.extend(ids)
        return {i: texts[i] for i in ids}

    got = rank_any(terms, reader(lists, words_read), contents, limit, collection=len(texts),
                   window=window, batch=batch, deferrable=deferrable)
    assert got == every_text_scored(terms, texts, window, limit, STOP + CONTENT)
    assert len(read) == len(set(read))  # no text read twice, even when a list comes late
    assert len(words_read) == len(set(words_read))  # each list read once, or never
    assert set(indexed) - deferrable <= set(words_read) <= set(indexed)


def weather_store() -> dict[int, str]:
    """3,000 messages; every fifth about the weather, each with common stop words."""
    topics = ["the weather", "a long walk", "quantum physics", "the garden", "old movies"]
    return {i: f"message {i} is about {topics[i % 5]}" for i in range(1, 3001)}


WEATHER = ("what", "about", "the", "weather")


def test_common_stop_words_are_ranked_from_the_texts_of_the_best() -> None:
    # "What about the weather?": "about" and "the" are in most messages; the newest weather
    # messages hold them too, and a message only their lists would add, older than the
    # weather list, can at most tie the best and loses as older: their lists are not read
    texts = weather_store()
    words = ["message", *WEATHER]
    lists = lists_of(texts, 200, words)
    read: list[int] = []
    words_read: list[str] = []

    def contents(ids: list[int]) -> dict[int, str]:
        read.extend(ids)
        return {i: texts[i] for i in ids}

    terms = Terms(WEATHER, ("is",), "any")
    got = rank_any(terms, reader(lists, words_read), contents, 10, collection=len(texts),
                   window=200, deferrable={"about", "the"})
    assert got == every_text_scored(terms, texts, 200, 10, words)
    assert [i for i, _ in got] == [i for i in range(3000, 2900, -1) if i % 5 == 0][:10]
    assert sorted(words_read) == ["weather", "what"]
    assert len(read) <= 64  # one read of the best candidates' texts


def test_stop_words_lists_are_read_when_content_words_fill_too_few_hits() -> None:
    texts = weather_store()
    texts[7] = "a rare zeppelin"
    words = ["zeppelin", "about", "the"]
    lists = lists_of(texts, 200, words)
    words_read: list[str] = []
    terms = Terms(("zeppelin", "about", "the"), (), "any")
    got = rank_any(terms, reader(lists, words_read), lambda ids: {i: texts[i] for i in ids},
                   5, collection=len(texts), window=200, deferrable={"about", "the"})
    assert got == every_text_scored(terms, texts, 200, 5, words)
    assert got[0][0] == 7 and len(got) == 5
    assert words_read == ["zeppelin", "about", "the"]  # the stop words' after, once
