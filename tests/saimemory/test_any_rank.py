"""The any-mode rank reads texts only where its word lists leave a doubt, and ranks exactly as
scoring every candidate's text would."""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from saimemory.any_match import query_weights, rank_any
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


def lists_of(texts: Mapping[int, str], window: int) -> dict[str, list[int]]:
    """Each word's newest ``window`` ids holding it, newest first (what a backend gives)."""
    return {
        word: sorted((i for i, text in texts.items() if word in text.casefold()),
                     reverse=True)[:window]
        for word in WORDS
    }


def every_text_scored(
    terms: Terms, texts: Mapping[int, str], window: int, limit: int
) -> list[tuple[int, float]]:
    """The rank as defined: every candidate's text scored for every word."""
    lists = lists_of(texts, window)
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

    got = rank_any(terms, lambda word: lists[word], contents, limit,
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
    got = rank_any(terms, lambda word: lists[word], contents, 10, collection=len(texts))
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
    got = rank_any(terms, lambda word: lists[word], contents, 10, collection=len(texts))
    assert got == every_text_scored(terms, texts, 2000, 10)
    assert sum(reads) == 2000
    assert reads == [64, 128, 256, 512, 1024, 16]  # before: 32 reads of 64
