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
- Short words (one or two characters: "is", "my", 猫, 東京) cannot use the index. They add
  to the rank of the candidates that contain them the weight of the commonest indexed
  word (they order otherwise equal candidates) but never add candidates, so "is" does not
  turn a search into a scan of every message.
- A query of short words only ("東京 猫") is answered from the persona's newest
  :data:`SHORT_SCAN` messages, newest first. A query of one word means the same in both
  modes and is answered as in the ``all`` mode (so 東京 alone is found however old).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

from saimemory.search_terms import RANK_WINDOW, Terms

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


def rank_any(
    terms: Terms, matches: WordMatches, limit: int, *, collection: int
) -> list[tuple[int, float]]:
    """The best ``limit`` message ids with their rank, best first (see the module text).

    ``collection`` is the number of the persona's messages (counted up to
    :data:`COLLECTION_CAP`)."""
    weights: dict[str, float] = {}
    candidates: dict[int, tuple[str, set[str]]] = {}
    for word in terms.indexed:
        found = matches(word)
        weights[word] = word_weight(len(found), collection)
        for message_id, content in found:
            candidates.setdefault(message_id, (content, set()))[1].add(word)
    short_weight = min(weights.values())
    scored: list[tuple[float, int]] = []
    for message_id, (content, matched) in candidates.items():
        folded = content.casefold()
        score = sum(weight for word, weight in weights.items()
                    if word in matched or word.casefold() in folded)
        score += short_weight * sum(word.casefold() in folded for word in terms.short)
        scored.append((score, message_id))
    return [(message_id, score) for score, message_id in heapq.nlargest(limit, scored)]
