"""Turns a user's search text into terms both backends can match.

Terms are whitespace-separated words matched as substrings. In the ``all`` mode every
term is required and taken as written (``100%``, ``it_maybe``). In the ``any`` mode, for
natural-language queries ("What is my name?"), one term suffices and each word loses its
leading and trailing punctuation, ASCII or not (``name?`` → ``name``, ``「東京」`` →
``東京``); a word that is only punctuation is dropped. Terms of at least
:data:`MIN_INDEXED_CHARS` characters can use the trigram index; shorter ones (very common
in Japanese: 猫, 東京) cannot: they are checked as substrings of the indexed words'
matches, or found through an index of their own when a query has only short words
(:mod:`saimemory.grams`).
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

from saimemory.errors import InvalidQueryError
from saimemory.prepare import to_micros
from saimemory.tags import PROVENANCE_COLUMNS

MIN_INDEXED_CHARS = 3
RANK_WINDOW = 2000
"""Hits are ranked among the newest this-many matches, so a word found in a large share
of a persona's messages costs a bounded amount of ranking work, not one per match."""
MAX_TERMS = 16
"""At most this many words: more is an error in the ``all`` mode; the ``any`` mode keeps
this many of the longest (the short words a long question has, such as "is" and "my",
are the ones left out)."""
SNIPPET_CHARS = 120

MatchMode = Literal["all", "any"]
MATCH_MODES: tuple[str, ...] = get_args(MatchMode)


@dataclass(frozen=True, slots=True)
class Terms:
    """The words of one query, split by whether a trigram index can find them."""

    indexed: tuple[str, ...]
    short: tuple[str, ...]
    match: MatchMode = "all"

    @property
    def all(self) -> tuple[str, ...]:
        """Every term, indexed ones first."""
        return self.indexed + self.short


def split_terms(query: str, match: str = "all") -> Terms:
    """The terms of ``query`` in the ``match`` mode; raise :class:`InvalidQueryError` when
    the mode is unknown or there are no terms."""
    if match not in MATCH_MODES:
        raise InvalidQueryError(
            f"search match must be one of {', '.join(MATCH_MODES)}, got {match!r}")
    words = [word for word in query.split() if word]
    if not words:
        raise InvalidQueryError(f"search query is empty: {query!r}")
    if any("\x00" in word for word in words):
        raise InvalidQueryError("search query contains a NUL character")
    if match == "any":
        return Terms(*_by_length(_natural_words(query, words)), match="any")
    if len(words) > MAX_TERMS:
        raise InvalidQueryError(f"search query has {len(words)} words; at most {MAX_TERMS}")
    return Terms(*_by_length(list(dict.fromkeys(words))))


def _natural_words(query: str, words: list[str]) -> list[str]:
    """The distinct words (ignoring case) without their edge punctuation, at most
    :data:`MAX_TERMS` of the longest, in query order."""
    first: dict[str, str] = {}
    for word in (piece for raw in words for piece in _cjk_pieces(_strip_punctuation(raw))):
        if word:
            first.setdefault(word.casefold(), word)
    unique = list(first.values())
    if not unique:
        raise InvalidQueryError(
            f"search query {query!r} has no words once punctuation is stripped")
    if len(unique) <= MAX_TERMS:
        return unique
    longest = sorted(range(len(unique)), key=lambda i: -len(unique[i]))[:MAX_TERMS]
    return [unique[i] for i in sorted(longest)]


def _cjk_pieces(word: str) -> list[str]:
    """``word`` itself, or, when it is longer than a trigram and holds Chinese, Japanese or
    Korean characters (a sentence written without spaces), its parts between punctuation
    cut into the trigrams the index can find: ``東京タワーはどうだった`` →
    ``東京タ``, ``京タワ``, ``タワー``, … A message sharing more (and rarer) trigrams ranks
    higher. When a sentence has more than :data:`MAX_TERMS` trigrams, every second one is
    taken, which still covers every character."""
    if len(word) <= MIN_INDEXED_CHARS or not any(is_cjk(char) for char in word):
        return [word]
    parts = "".join(" " if _is_punctuation(char) else char for char in word).split()
    grams = [part[i:i + MIN_INDEXED_CHARS]
             for part in parts
             for i in range(max(1, len(part) - MIN_INDEXED_CHARS + 1))]
    if len(grams) > MAX_TERMS:
        grams = [part[i:i + MIN_INDEXED_CHARS]
                 for part in parts
                 for i in sorted({*range(0, max(1, len(part) - MIN_INDEXED_CHARS + 1), 2),
                                  max(0, len(part) - MIN_INDEXED_CHARS)})]
    return grams


def is_cjk(char: str) -> bool:
    """A kana, CJK ideograph, or Hangul syllable character."""
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


_CJK_RANGES = (
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width katakana
)


def _strip_punctuation(word: str) -> str:
    start, end = 0, len(word)
    while start < end and _is_punctuation(word[start]):
        start += 1
    while end > start and _is_punctuation(word[end - 1]):
        end -= 1
    return word[start:end]


def _is_punctuation(char: str) -> bool:
    """Unicode punctuation (？。、「」 included), or a character that is ASCII punctuation
    once normalised (``$``, ``%``, full-width ``＄``, ``～``)."""
    return (unicodedata.category(char).startswith("P")
            or unicodedata.normalize("NFKC", char) in _ASCII_PUNCTUATION)


_ASCII_PUNCTUATION = frozenset(string.punctuation)


def _by_length(words: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words a trigram index can find, and the shorter ones."""
    return (tuple(w for w in words if len(w) >= MIN_INDEXED_CHARS),
            tuple(w for w in words if len(w) < MIN_INDEXED_CHARS))


def like_pattern(term: str) -> str:
    """A LIKE pattern matching ``term`` anywhere (``\\`` is the escape character)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def fts5_query(terms: Terms) -> str:
    """An FTS5 MATCH expression: every indexed term as a quoted phrase, all required."""
    return " AND ".join('"' + term.replace('"', '""') + '"' for term in terms.indexed)


def snippet(content: str, terms: Terms) -> str:
    """About :data:`SNIPPET_CHARS` characters of ``content`` around the first term found."""
    folded = content.casefold()
    hits = [folded.find(term.casefold()) for term in terms.all]
    start = min((hit for hit in hits if hit >= 0), default=0)
    begin = max(0, start - SNIPPET_CHARS // 3)
    end = min(len(content), begin + SNIPPET_CHARS)
    text = content[begin:end].replace("\n", " ")
    return ("…" if begin > 0 else "") + text + ("…" if end < len(content) else "")


def search_filters(
    tags: Sequence[str], since: datetime | None, until: datetime | None
) -> tuple[str, list[Any]]:
    """SQL conditions on ``m`` (messages) for the tag and time filters of a search."""
    if isinstance(tags, str):
        raise InvalidQueryError(f"tags must be a sequence of strings, got {tags!r}")
    sql: list[str] = []
    params: list[Any] = []
    for tag in dict.fromkeys(tags):
        if not isinstance(tag, str):
            raise InvalidQueryError(f"tags must be strings, got {tag!r}")
        prefix, colon, value = tag.partition(":")
        column = PROVENANCE_COLUMNS.get(prefix) if colon else None
        if column is not None:  # a tag the store derives from a column, never stores
            sql.append(f"AND m.{column} = ? ")
            params.append(value)
            continue
        sql.append("AND EXISTS (SELECT 1 FROM message_tags ft WHERE ft.message_id = m.id "
                   "AND ft.tag = ?) ")
        params.append(tag)
    for bound, op in ((since, ">="), (until, "<")):
        if bound is None:
            continue
        if bound.tzinfo is None:
            raise InvalidQueryError(f"search time bounds must be timezone-aware, got {bound!r}")
        sql.append(f"AND m.created_us {op} ? ")
        params.append(to_micros(bound))
    if since is not None and until is not None and since >= until:
        raise InvalidQueryError(f"since ({since}) must be before until ({until})")
    return "".join(sql), params
