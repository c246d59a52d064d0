"""Search of the SQL backends' store: the ``all`` and ``any`` modes over the trigram index
and the index of short words, ranked (:mod:`saimemory.all_match`, :mod:`saimemory.any_match`)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, cast

from saimemory.all_match import rank_all, relevance
from saimemory.any_match import COLLECTION_CAP, WORD_WINDOW, rank_any
from saimemory.errors import InvalidQueryError
from saimemory.records import SearchHit
from saimemory.search_terms import (
    RANK_WINDOW,
    MatchMode,
    Terms,
    like_pattern,
    search_filters,
    snippet,
    split_terms,
)
from saimemory.sql_core import SqlCore
from saimemory.tx import Row, Tx

CONTENT_CHUNK = 500
"""Messages whose text one query reads by id."""


class SqlSearch(SqlCore):
    """Substring search of a persona's messages; a backend gives the index lookups."""

    @abstractmethod
    def _matches(
        self, tx: Tx, persona: str, terms: Terms, filters: tuple[str, list[Any]], limit: int
    ) -> list[tuple[int, str]]:
        """``(id, content)`` of the persona's newest ``limit`` messages that contain every
        term and pass the filters, newest first. ``terms`` has at least one indexed term
        (three characters or more), which the trigram index finds; a query of short words
        only goes to :meth:`_short_matches`."""

    @abstractmethod
    def _match_ids(
        self, tx: Tx, persona: str, word: str, filters: tuple[str, list[Any]], limit: int
    ) -> list[int]:
        """The ids of the persona's newest ``limit`` messages that contain the indexed
        ``word`` and pass the filters, newest first (no text read)."""

    _short_walk = 256
    """A persona's newest messages a query of short words reads one by one (a common
    word's hits are there) before it looks its words up in the index of short words,
    migration 8 (for the older messages)."""

    def _short_matches(
        self,
        tx: Tx,
        persona: str,
        words: Sequence[str],
        filters: tuple[str, list[Any]],
        limit: int,
        *,
        any_word: bool,
    ) -> list[tuple[int, str]]:
        """``(id, content)`` of the persona's newest ``limit`` messages that contain every
        one (or, with ``any_word``, one) of the short ``words`` and pass the filters,
        newest first: the newest ones (above :meth:`_walk_floor`) by ``LIKE``, then the older
        ones through the index (:meth:`_short_lookup`), ``LIKE`` confirming each."""
        where, params = filters
        likes = (" OR " if any_word else " AND ").join(self._short_like for _ in words)
        patterns = [like_pattern(word) for word in words]
        above = self._walk_floor(tx, persona)
        rows = tx.fetch(
            f"SELECT m.id, m.content FROM messages m WHERE m.persona = ? AND m.id > ? AND "
            f"({likes}) {where}ORDER BY m.id DESC LIMIT ?",
            [persona, above, *patterns, *params, limit],
        )
        if len(rows) < limit and above:
            rows += self._short_lookup(
                tx, persona, words, above, (f"AND ({likes}) {where}", [*patterns, *params]),
                limit - len(rows), any_word=any_word,
            )
        # a BIGINT and a TEXT NOT NULL column: both drivers give int and str already
        return cast("list[tuple[int, str]]", rows)

    def _walk_floor(self, tx: Tx, persona: str) -> int:
        """The id above which a query of short words reads the persona's messages one by
        one: below its :attr:`_short_walk` newest (0: it has no more)."""
        floor = tx.fetch(
            "SELECT m.id FROM messages m WHERE m.persona = ? ORDER BY m.id DESC LIMIT 1 OFFSET ?",
            (persona, self._short_walk),
        )
        return int(floor[0][0]) if floor else 0

    @abstractmethod
    def _short_lookup(
        self,
        tx: Tx,
        persona: str,
        words: Sequence[str],
        upto: int,
        conditions: tuple[str, list[Any]],
        limit: int,
        *,
        any_word: bool,
    ) -> list[Row]:
        """``(id, content)`` of the persona's newest ``limit`` messages up to id ``upto``
        that the index of short words holds for every word (or one, ``any_word``) and
        that pass ``conditions`` (SQL on ``m`` starting with ``AND``, and its
        parameters), newest first."""

    def _contents(self, tx: Tx, ids: Collection[int]) -> dict[int, str]:
        """The text of the messages ``ids``, by id."""
        found: dict[int, str] = {}
        wanted = list(ids)
        for start in range(0, len(wanted), CONTENT_CHUNK):
            chunk = wanted[start:start + CONTENT_CHUNK]
            marks = ", ".join("?" * len(chunk))
            found.update(tx.fetch(f"SELECT id, content FROM messages WHERE id IN ({marks})",
                                  chunk))
        return found

    def search(
        self,
        persona: str,
        query: str,
        *,
        tags: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 20,
        match: MatchMode = "all",
    ) -> list[SearchHit]:
        """Substring search with tag (all required) and time filters.

        ``match="all"``: every word is required. ``since`` is inclusive, ``until`` exclusive.
        Words of three characters or more use the trigram index; shorter ones are checked
        as substrings of the indexed candidates or, when the query has only short words,
        found through the index of short words (newest first). Hits are ranked (relevance, see
        :mod:`saimemory.all_match`, then recency) among the newest ``RANK_WINDOW``
        matches; a query of short words only is answered newest first (its hits still
        carry their relevance as rank). ``match="any"``: one word suffices, punctuation
        around words is ignored, rare words rank first and English function words count
        least (see :mod:`saimemory.any_match`).
        """
        terms = split_terms(query, match)
        if limit < 1:
            raise InvalidQueryError(f"limit must be >= 1, got {limit}")
        filters = search_filters(tags, since, until)
        with self._search_read(persona) as tx:
            if terms.match == "any" and len(terms.all) > 1:
                found = self._any_rows(tx, persona, terms, filters, limit)
            else:
                found = self._all_rows(tx, persona, terms, filters, limit)
            messages = self._messages(tx, [row for row, _ in found])
        return [
            SearchHit(message=message, snippet=snippet(message.content, terms), rank=rank)
            for message, (_, rank) in zip(messages, found, strict=True)
        ]

    def _any_rows(
        self, tx: Tx, persona: str, terms: Terms, filters: tuple[str, list[Any]], limit: int
    ) -> list[tuple[Row, float]]:
        """The ``any`` mode's hits with their rank, best first."""
        if not terms.indexed:
            return self._short_rows(tx, persona, terms, filters, limit, any_word=True)
        ranked = rank_any(
            terms, lambda words: self._word_lists(tx, persona, words, filters, WORD_WINDOW),
            lambda ids: self._contents(tx, ids), limit,
            collection=self._collection(tx, persona), window=WORD_WINDOW,
            deferrable=self._costly_words(tx, persona, terms.indexed, filters, limit),
        )
        return self._ranked_rows(tx, ranked)

    def _word_lists(
        self,
        tx: Tx,
        persona: str,
        words: Sequence[str],
        filters: tuple[str, list[Any]],
        window: int,
    ) -> dict[str, list[int]]:
        """The ``any`` mode's reads of words: each indexed word's newest ``window`` matches
        (:meth:`_match_ids`)."""
        return {word: self._match_ids(tx, persona, word, filters, window) for word in words}

    def _costly_words(
        self, tx: Tx, persona: str, words: Sequence[str], filters: tuple[str, list[Any]],
        limit: int,
    ) -> frozenset[str]:
        """The words whose lists cost the ``any`` mode most to read, which it reads only if
        the rank of the best ``limit`` needs them (:func:`~saimemory.any_match.rank_any`);
        none here."""
        return frozenset()

    def _all_rows(
        self, tx: Tx, persona: str, terms: Terms, filters: tuple[str, list[Any]], limit: int
    ) -> list[tuple[Row, float]]:
        """The ``all`` mode's hits (and a one-word query's) with their rank: the best of the
        newest ``RANK_WINDOW`` matches, or the newest matches when no term is indexed."""
        if not terms.indexed:
            return self._short_rows(tx, persona, terms, filters, limit, any_word=False)
        return self._ranked_rows(tx, self._rank_all(tx, persona, terms, filters, limit))

    def _rank_all(
        self, tx: Tx, persona: str, terms: Terms, filters: tuple[str, list[Any]], limit: int
    ) -> list[tuple[int, float]]:
        """The best ``limit`` ``(id, rank)`` of the newest ``RANK_WINDOW`` matches of a
        query with an indexed term (:func:`~saimemory.all_match.rank_all`)."""
        return rank_all(terms, self._matches(tx, persona, terms, filters, RANK_WINDOW), limit)

    def _collection(self, tx: Tx, persona: str) -> int:
        """The persona's number of messages, counted up to :data:`COLLECTION_CAP` (the
        collection the ``any`` mode weighs words in)."""
        return int(tx.fetch(
            "SELECT count(*) FROM (SELECT 1 FROM messages m WHERE m.persona = ? LIMIT ?) AS n",
            (persona, COLLECTION_CAP),
        )[0][0])

    def _ranked_rows(
        self, tx: Tx, ranked: list[tuple[int, float]]
    ) -> list[tuple[Row, float]]:
        """The rows of the ``(id, rank)`` hits, in the order given."""
        if not ranked:
            return []
        marks = ", ".join("?" * len(ranked))
        rows = {int(row[0]): row for row in self._last_fetch(
            tx,
            f"SELECT {self._columns} FROM messages m WHERE m.id IN ({marks})",
            [message_id for message_id, _ in ranked],
        )}
        return [(rows[message_id], rank) for message_id, rank in ranked]

    def _last_fetch(self, tx: Tx, sql: str, params: Sequence[Any]) -> list[Row]:
        """The rows of a search's last statement (:meth:`_ranked_rows`); a backend with
        round trips ends the search's read transaction in the same one."""
        return tx.fetch(sql, params)

    def _short_rows(
        self,
        tx: Tx,
        persona: str,
        terms: Terms,
        filters: tuple[str, list[Any]],
        limit: int,
        *,
        any_word: bool,
    ) -> list[tuple[Row, float]]:
        """Messages of a query of short words only that contain every one of its words (or,
        with ``any_word``, one), newest first, with their relevance as rank."""
        found = self._short_matches(tx, persona, terms.short, filters, limit, any_word=any_word)
        ranks = relevance([content for _, content in found], terms)
        return self._ranked_rows(
            tx, [(message_id, rank) for (message_id, _), rank in zip(found, ranks, strict=True)]
        )
