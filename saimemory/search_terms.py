"""Turns a user's search text into terms both backends can match.

Terms are whitespace-separated words matched as substrings, all required. Terms of at
least :data:`MIN_INDEXED_CHARS` characters can use the trigram index; shorter ones (very
common in Japanese: 猫, 東京) cannot, and are matched by a substring test instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from saimemory.errors import InvalidQueryError
from saimemory.prepare import to_micros

MIN_INDEXED_CHARS = 3
RANK_WINDOW = 2000
"""Hits are ranked among the newest this-many matches, so a word found in a large share
of a persona's messages costs a bounded amount of ranking work, not one per match."""
MAX_TERMS = 16
SNIPPET_CHARS = 120


@dataclass(frozen=True, slots=True)
class Terms:
    """The words of one query, split by whether a trigram index can find them."""

    indexed: tuple[str, ...]
    short: tuple[str, ...]

    @property
    def all(self) -> tuple[str, ...]:
        """Every term, indexed ones first."""
        return self.indexed + self.short


def split_terms(query: str) -> Terms:
    """The terms of ``query``; raise :class:`InvalidQueryError` when there are none."""
    words = [word for word in query.split() if word]
    if not words:
        raise InvalidQueryError(f"search query is empty: {query!r}")
    if len(words) > MAX_TERMS:
        raise InvalidQueryError(f"search query has {len(words)} words; at most {MAX_TERMS}")
    if any("\x00" in word for word in words):
        raise InvalidQueryError("search query contains a NUL character")
    unique = list(dict.fromkeys(words))
    return Terms(
        indexed=tuple(w for w in unique if len(w) >= MIN_INDEXED_CHARS),
        short=tuple(w for w in unique if len(w) < MIN_INDEXED_CHARS),
    )


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


def occurrences(content: str, terms: Terms) -> float:
    """How many times the terms occur in ``content`` (the rank of substring matches)."""
    folded = content.casefold()
    return float(sum(folded.count(term.casefold()) for term in terms.all))


def search_filters(
    tags: Sequence[str], since: datetime | None, until: datetime | None
) -> tuple[str, list[Any]]:
    """SQL conditions on ``m`` (messages) for the tag and time filters of a search."""
    if isinstance(tags, str):
        raise InvalidQueryError(f"tags must be a sequence of strings, got {tags!r}")
    sql: list[str] = []
    params: list[Any] = []
    for tag in dict.fromkeys(tags):
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
