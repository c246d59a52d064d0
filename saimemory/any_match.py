"""The ``any`` search mode: one word of the query suffices, and rare words rank first.

It serves natural-language queries ("What is my name?"), where most words are common and
one or two say what is looked for:

- Each indexed word (three characters or more) finds, through the trigram index, the
  newest :data:`WORD_WINDOW` messages that contain it and pass the search's tag and time
  filters. Their union are the candidates. How many messages a word found (at most the
  window) is its document frequency: counting costs one bounded query per word, whatever
  the size of the store.
- A candidate's rank is the sum of the weights of the query's words it contains. A word's
  weight is BM25's inverse document frequency, the collection being the persona's
  messages counted up to :data:`COLLECTION_CAP` (one bounded count), so a word found in
  few messages weighs much more than one found in many ("name" outranks "what"; in a
  Japanese sentence cut into trigrams, ``タワー`` outranks ``だった``), in a store of ten
  messages as in one of a million. Equal ranks go to the newest message.
- Short words (one or two characters: "is", "my", 猫, 東京) cannot use the index. They
  weigh as the commonest indexed content word (the commonest indexed word when every
  indexed word is a stop word, below): they order otherwise equal candidates but never
  add candidates, so "is" does not turn a search into a scan of every message.
- Stop words, English function words such as "did", "we", "about" or "what"
  (:mod:`saimemory.stop_words`), say little about what is looked for, however rare a small
  store makes them. When the query has a content word (one that is not a stop word), each
  stop word weighs at most the lightest content word's weight divided by
  :data:`~saimemory.search_terms.MAX_TERMS`: a query has fewer stop words than that, so
  together they weigh less than any one content word. For "Did we talk about hiking?", a
  message with "hiking" outranks one with "did", "we" and "about"; stop words still order
  the messages that share the same content words. A query of stop words only ("What is
  it about?") weighs them as any word. Japanese trigrams are never stop words: their
  rarity alone tells particles from content.
- A query of short words only ("東京 猫") is answered from the persona's newest
  :data:`SHORT_SCAN` messages, newest first. A query of one word means the same in both
  modes and is answered as in the ``all`` mode (so 東京 alone is found however old).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping

from saimemory.search_terms import MAX_TERMS, RANK_WINDOW, Terms
from saimemory.stop_words import is_stop_word

WORD_WINDOW = RANK_WINDOW
"""Messages read per indexed word, newest first: its candidates and its capped count."""
COLLECTION_CAP = 20_000
"""The persona's messages are counted up to this many for the weights: beyond it a word
found in the whole window (:data:`WORD_WINDOW`) still weighs far less than a rare one."""
SHORT_SCAN = 20_000
"""Newest messages of the persona a query of short words only is matched against."""

WordMatches = Callable[[str], list[tuple[int, str]]]
"""The newest (at most :data:`WORD_WINDOW`) ``(id, content)`` of messages containing a word."""


def word_weight(found: int, collection: int) -> float:
    """The weight of a word found in ``found`` of ``collection`` messages."""
    collection = max(collection, found)
    return math.log(1.0 + (collection - found + 0.5) / (found + 0.5))


def query_weights(terms: Terms, found: Mapping[str, int], collection: int) -> dict[str, float]:
    """The weight of each word of ``terms`` (see the module text); ``found`` is how many
    messages each indexed word found, ``collection`` the persona's message count."""
    weights = {word: word_weight(found[word], collection) for word in terms.indexed}
    content = [weight for word, weight in weights.items() if not is_stop_word(word)]
    short_weight = min(content or weights.values())
    weights.update((word, short_weight) for word in terms.short)
    lightest = min((weights[word] for word in terms.all if not is_stop_word(word)),
                   default=None)
    if lightest is not None:
        cap = lightest / MAX_TERMS
        for word in terms.all:
            if is_stop_word(word):
                weights[word] = min(weights[word], cap)
    return weights


def rank_any(
    terms: Terms, matches: WordMatches, limit: int, *, collection: int
) -> list[tuple[int, float]]:
    """The best ``limit`` message ids with their rank, best first (see the module text).

    ``collection`` is the number of the persona's messages (counted up to
    :data:`COLLECTION_CAP`)."""
    found: dict[str, int] = {}
    candidates: dict[int, tuple[str, set[str]]] = {}
    for word in terms.indexed:
        hits = matches(word)
        found[word] = len(hits)
        for message_id, content in hits:
            candidates.setdefault(message_id, (content, set()))[1].add(word)
    weights = query_weights(terms, found, collection)
    checks = [(word, word.casefold(), weight) for word, weight in weights.items()]
    scored: list[tuple[float, int]] = []
    for message_id, (content, matched) in candidates.items():
        folded = None  # the content casefolded, once a word its lists missed is looked for
        score = 0.0
        for word, folded_word, weight in checks:
            if word in matched:
                score += weight
                continue
            if folded is None:
                folded = content.casefold()
            if folded_word in folded:
                score += weight
        scored.append((score, message_id))
    return [(message_id, score) for score, message_id in heapq.nlargest(limit, scored)]
