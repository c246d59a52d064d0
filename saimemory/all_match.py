"""The rank of the ``all`` search mode: how much of a message the query's words make up.

Every hit contains every word of the query, so what tells hits apart is how often the words
occur and in how long a message. The rank is the term-frequency part of BM25, summed over
the query's words (they weigh the same: every hit has all of them)::

    rank = Σ tf · (K1 + 1) / (tf + K1 · (1 − B + B · length / average length))

``tf`` is how many times a word occurs in the message (case-insensitively, as a substring,
as it was matched), ``length`` the message's length in characters (Japanese has no spaces
between words) and the average is that of the messages ranked together. A message of
average length holding each word once ranks 1.0 a word; each further occurrence raises the
rank, less and less (never beyond ``K1 + 1`` a word), and a longer message ranks lower than
a shorter one with the same occurrences. Equal ranks go to the newest message.

The backends only find the matching messages; the rank is computed here, from their
contents, so it is the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from saimemory.search_terms import Terms, is_cjk

K1 = 1.2
"""How fast further occurrences of a word stop raising the rank (BM25's usual value)."""
B = 0.75
"""How much a message's length lowers its rank (BM25's usual value)."""


def fold_free(word: str) -> bool:
    """Whether casefolding a text leaves where ``word`` occurs in it as it was: each of the
    word's characters is ASCII but not a letter, or Chinese, Japanese or Korean
    (:func:`~saimemory.search_terms.is_cjk`). Casefolding leaves such a character alone and
    never makes one out of another character, so the word occurs in the folded text exactly
    where it occurs in the text, and the text need not be folded to count it."""
    return all(is_cjk(char) or (char.isascii() and not char.isalpha()) for char in word)


def relevance(contents: Sequence[str], terms: Terms) -> list[float]:
    """The rank of each of ``contents`` for ``terms``, ranked together (module text)."""
    if not contents:
        return []
    lengths = list(map(len, contents))
    average = max(1.0, sum(lengths) / len(contents))
    words = [term.casefold() for term in terms.all]
    fixed, per_char = K1 * (1.0 - B), K1 * B / average
    texts = contents if all(map(fold_free, words)) else [text.casefold() for text in contents]
    top = K1 + 1.0
    if len(words) == 1:  # the common query, without the loop over words
        word = words[0]
        return [tf * top / (tf + (fixed + per_char * length))
                if (tf := text.count(word)) else 0.0
                for text, length in zip(texts, lengths, strict=True)]
    ranks = []
    for text, length in zip(texts, lengths, strict=True):
        norm = fixed + per_char * length
        rank = 0.0
        for word in words:
            tf = text.count(word)
            if tf:
                rank += tf * top / (tf + norm)
        ranks.append(rank)
    return ranks


def rank_all(
    terms: Terms, found: Sequence[tuple[int, str]], limit: int
) -> list[tuple[int, float]]:
    """The best ``limit`` of the ``(id, content)`` messages ``found`` with their rank, best
    first; equal ranks newest (highest id) first."""
    ranks = relevance([content for _, content in found], terms)
    best = heapq.nlargest(limit, zip(ranks, (message_id for message_id, _ in found),
                                     strict=True))
    return [(message_id, rank) for rank, message_id in best]
