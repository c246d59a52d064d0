"""Search in the PostgreSQL backend: every word by ``LIKE``, found through each persona's
trigram keys (migration 10) when the word is rare and by a walk of the newest rows when it
is common, estimated from the planner's statistics of the texts (:class:`TextStats`), and
fold-free words ranked by the server (:class:`PgSearch`)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from saimemory.all_match import K1, B, fold_free
from saimemory.any_match import COLLECTION_CAP, WORD_WINDOW
from saimemory.migrations import LOWER_COLUMN, PERSONA_GRAMS_FUNCTION, SHORT_KEYS_FUNCTION
from saimemory.pg_tx import PgTx
from saimemory.search_terms import RANK_WINDOW, Terms, like_pattern
from saimemory.sqlbase import Row, SqlStore, Tx
from saimemory.stop_words import is_stop_word


def holds_word(word: str, *, planning: bool = False) -> str:
    """The condition that message ``m`` holds an indexed word (its ``LIKE`` pattern the one
    parameter), case-insensitively: ``LIKE`` on the text when casefolding cannot touch the
    word (:func:`~saimemory.all_match.fold_free`: CJK, digits, ASCII punctuation), else
    ``LIKE`` of the lower-cased pattern on the lower-cased text (migration 11), which is
    what ``ILIKE`` compares. Lower case changes none of a fold-free word's characters and
    makes none of them out of another, so all three find the same messages; neither
    ``LIKE`` lowers every text it checks. ``planning``: the ``ILIKE`` form instead, which
    the planner estimates from the statistics of the texts themselves."""
    if fold_free(word):
        return "m.content LIKE ? ESCAPE '\\'"
    if planning:
        return "m.content ILIKE ? ESCAPE '\\'"
    return f"m.{LOWER_COLUMN} LIKE lower(?) ESCAPE '\\'"


def few_matches(tx: Tx, found: str, values: Sequence[Any], limit: int) -> bool:
    """Whether the planner expects at most ``limit`` rows of ``FROM …`` SQL ``found`` (its
    estimate of how many messages hold a word comes from the texts' statistics). A word in fewer
    messages than a search reads is looked up by its persona's trigram keys (migration 10):
    every one of its messages is read and checked, few enough. A commoner word is left to
    the plan of the newest rows, which stops at ``limit`` (the keys' own estimate multiplies
    the trigrams' shares as if independent, so it finds every word rare)."""
    return estimated_rows(tx, f"SELECT 1 {found}", values)[0] <= limit


def keys_cost_less(rows: float, limit: int, messages: float) -> bool:
    """Whether finding the newest ``limit`` of a word's ``rows`` matches (estimated) among
    ``messages`` costs less by its trigram keys than by a walk of the newest rows. The keys
    read every match, one heap page each; the walk reads ``messages · limit / rows`` rows,
    neighbours on a page, at about half the cost a row (1M messages: 0.7 against 1.5 µs)."""
    return rows <= limit or 2 * rows * rows <= limit * messages


def estimated_rows(tx: Tx, sql: str, values: Sequence[Any]) -> list[float]:
    """How many rows the planner expects of ``sql``, or of each part of a ``UNION ALL``."""
    plan = tx.fetch(f"EXPLAIN (FORMAT JSON) {sql}", values)[0][0][0]["Plan"]
    if plan["Node Type"] != "Append":
        return [float(plan["Plan Rows"])]
    return [float(part["Plan Rows"]) for part in plan.get("Plans", [])
            if part.get("Parent Relationship") == "Member"]  # not an init plan


STATS_SECONDS = 60.0
"""How long a store uses the statistics of the messages' texts it read (:class:`TextStats`)
before it reads them again; the server changes them only when it analyzes the table."""

CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan"
"""A generic plan cannot see a search's patterns, so it cannot tell a rare word (use the
trigram keys) from a common one (walk the newest rows): each search is planned afresh."""


@dataclass(frozen=True, slots=True)
class TextStats:
    """The statistics the planner keeps of the messages' texts (``pg_stats`` of
    ``messages.content``: the commonest texts with their shares, and a histogram of the
    others), lower-cased, to estimate what share of the messages hold a word without asking
    the planner (an ``EXPLAIN`` costs a round trip and a plan, more than half a
    millisecond at a million messages). The estimate steers only how a word's messages are
    found (by its trigram keys or by a walk of the newest), never which are found."""

    null_share: float
    common: tuple[tuple[str, float], ...]
    histogram: tuple[str, ...]

    def share(self, word: str) -> float:
        """The share of messages whose text holds ``word`` (ignoring case), estimated as
        the planner does a ``LIKE '%word%'``: the share of the histogram's inner entries
        holding it, kept between 0.0001 and 0.9999, for the texts that are not among the
        commonest, plus the shares of the commonest texts holding it."""
        folded = word.lower()
        inner = self.histogram[1:-1]
        share = sum(folded in text for text in inner) / len(inner)
        share = min(max(share, 0.0001), 0.9999)
        common = sum(freq for _, freq in self.common)
        held = sum(freq for text, freq in self.common if folded in text)
        return share * max(0.0, 1.0 - self.null_share - common) + held


def read_text_stats(tx: Tx, schema: str) -> TextStats | None:
    """The planner's statistics of the texts of ``schema``'s messages, or None when there is
    no histogram of ten entries or more to estimate from (the table not analyzed yet, or
    too few distinct texts): the planner's own estimate is asked for then."""
    found = tx.fetch(
        "SELECT null_frac, most_common_vals::text::text[], most_common_freqs, "
        "histogram_bounds::text::text[] FROM pg_stats "
        "WHERE schemaname = ? AND tablename = 'messages' AND attname = 'content'", [schema])
    if not found or not found[0][3] or len(found[0][3]) < 10:
        return None
    null_share, common, freqs, histogram = found[0]
    return TextStats(float(null_share),
                     tuple(zip((text.lower() for text in common or ()),
                               map(float, freqs or ()), strict=True)),
                     tuple(text.lower() for text in histogram))


class PgSearch(SqlStore):
    """The search queries of :class:`~saimemory.postgres.PostgresStore`."""

    schema: str
    """The PostgreSQL schema of the store's tables."""
    _short_like = f"m.{LOWER_COLUMN} LIKE lower(?) ESCAPE '\\'"
    _text_stats: tuple[float, TextStats | None] | None = None
    """When (``time.monotonic``) the statistics of the texts were read, and what they were."""

    def _matches(
        self, tx: Tx, persona: str, terms: Terms, filters: tuple[str, list[Any]], limit: int
    ) -> list[tuple[int, str]]:
        """Every term by ``LIKE`` (:func:`holds_word`; a short one outside the trigram index):
        the persona's trigram keys find rows for a rare indexed term, the newest rows are
        walked for a common one."""
        found, values = self._found(tx, persona, terms.indexed, terms.short, filters, limit)
        rows = tx.fetch(f"SELECT m.id, m.content {found}ORDER BY m.id DESC LIMIT ?",
                        [*values, limit])
        # a BIGINT and a TEXT NOT NULL column: psycopg gives int and str already
        return cast("list[tuple[int, str]]", rows)

    def _rank_all(
        self, tx: Tx, persona: str, terms: Terms, filters: tuple[str, list[Any]], limit: int
    ) -> list[tuple[int, float]]:
        """As :meth:`SqlStore._rank_all`; when every word is fold-free (Japanese, digits),
        the rank is computed by the server, so only the best ``limit`` come back, not the
        text of every match (up to ``RANK_WINDOW``). Folding leaves such a word and where
        it occurs alone, so :func:`~saimemory.all_match.relevance` counts it in the text as
        it is; ``replace`` counts the same occurrences (apart, left to right), and the rank
        is the same double-precision arithmetic, in the same order, so the same number."""
        if not all(map(fold_free, terms.all)):
            return super()._rank_all(tx, persona, terms, filters, limit)
        found, values = self._found(tx, persona, terms.indexed, terms.short, filters,
                                    RANK_WINDOW)
        counts = ", ".join(
            f"(octet_length(m.content) - octet_length(replace(m.content, ?, ''))) / "
            f"{len(word.encode())}"
            f" AS tf{k}" for k, word in enumerate(terms.all))
        ranks = "".join(f" + CASE WHEN f.tf{k} = 0 THEN 0.0::float8 ELSE f.tf{k} * ?::float8"
                        f" / (f.tf{k} + (?::float8 + a.per_char * f.n)) END"
                        for k in range(len(terms.all)))
        rows = tx.fetch(
            # materialized: the average is computed once, not once a match
            f"WITH f AS MATERIALIZED (SELECT m.id, char_length(m.content)::float8 AS n, {counts} "
            f"{found}ORDER BY m.id DESC LIMIT ?), a AS MATERIALIZED (SELECT ?::float8 / "
            "greatest(1.0::float8, sum(f.n) / count(*)::float8) AS per_char FROM f)"
            f" SELECT f.id, 0.0::float8{ranks} AS rank FROM f, a"
            " ORDER BY rank DESC, f.id DESC LIMIT ?",
            [*terms.all, *values, RANK_WINDOW, K1 * B,
             *[value for _ in terms.all for value in (K1 + 1.0, K1 * (1.0 - B))], limit])
        return [(int(row[0]), float(row[1])) for row in rows]

    def _word_lists(
        self,
        tx: Tx,
        persona: str,
        words: Sequence[str],
        filters: tuple[str, list[Any]],
        window: int,
    ) -> dict[str, list[int]]:
        """As :meth:`SqlStore._word_lists`, in one statement whatever the number of words
        (plus an ``EXPLAIN`` when the statistics of the texts cannot estimate: a search
        with filters, or a table not analyzed yet). A word's list comes by its trigram keys
        when those cost less than a walk of the newest rows would (a word in a tenth of the
        messages: the walk reads ten for each it lists)."""
        where, params = filters
        self._plan_afresh(tx)
        each = [[persona, like_pattern(word), *params] for word in words]
        collection = self._persona_messages(tx, persona)
        shares = self._shares(tx, words, filters)
        if shares is not None:
            estimates, messages = [collection * share for share in shares], float(collection)
        else:  # one EXPLAIN estimates every word and the persona's messages that pass
            parts = [f"SELECT 1 FROM messages m WHERE m.persona = ? AND "
                     f"{holds_word(word, planning=True)} {where}" for word in words]
            parts.append(f"SELECT 1 FROM messages m WHERE m.persona = ? {where}")
            each_part = [*each, [persona, *params]]
            estimates = estimated_rows(tx, " UNION ALL ".join(parts),
                                       [value for values in each_part for value in values])
            if len(estimates) != len(parts):  # not one estimate a part: ask part by part
                estimates = [estimated_rows(tx, part, values)[0]
                             for part, values in zip(parts, each_part, strict=True)]
            messages = estimates.pop()
        selects, values = [], []
        for k, (word, rows) in enumerate(zip(words, estimates, strict=True)):
            keys = (f"AND {PERSONA_GRAMS_FUNCTION}(m.persona, m.content) @> "
                    f"{PERSONA_GRAMS_FUNCTION}(?, ?) "
                    if keys_cost_less(rows, window, messages) else "")
            # a word's ids in one array, newest first (psycopg reads it in C; a row each,
            # or a text to split, cost more in Python)
            selects.append(f"(SELECT {k}, array_agg(w.id ORDER BY w.id DESC) FROM"
                           f" (SELECT m.id FROM messages m WHERE m.persona = ? AND"
                           f" {holds_word(word)} {where}{keys}ORDER BY m.id DESC LIMIT ?) AS w)")
            values += [*each[k], *([persona, word] if keys else []), window]
        found: list[list[int]] = [[] for _ in words]
        for k, ids in tx.fetch(" UNION ALL ".join(selects), values):
            if ids:
                found[k] = ids
        return dict(zip(words, found, strict=True))

    def _costly_words(
        self, tx: Tx, persona: str, words: Sequence[str], filters: tuple[str, list[Any]],
        limit: int,
    ) -> frozenset[str]:
        """The stop words whose lists :meth:`_word_lists` would read by walking the newest
        rows (their trigram keys would cost more: common words), estimated from the
        statistics of the texts. None when the query's content words are expected in fewer
        than ``limit`` messages (their lists alone would not fill the hits, so the rank
        would read the stop words' lists after them, a round trip more), nor for a search
        with filters, whose estimates would take an ``EXPLAIN`` of their own."""
        stops = [word for word in words if is_stop_word(word)]
        if not stops or len(stops) == len(words):
            return frozenset()
        shares = self._shares(tx, words, filters)
        if shares is None:
            return frozenset()
        messages = float(self._persona_messages(tx, persona))
        rows = {word: messages * share for word, share in zip(words, shares, strict=True)}
        if max(rows[word] for word in words if word not in stops) < limit:
            return frozenset()
        return frozenset(word for word in stops
                         if not keys_cost_less(rows[word], WORD_WINDOW, messages))

    def _collection(self, tx: Tx, persona: str) -> int:
        """The persona's count of messages that migration 12's triggers keep, up to
        :data:`~saimemory.any_match.COLLECTION_CAP`: one row read, not the persona's part
        of an index."""
        return min(self._persona_messages(tx, persona), COLLECTION_CAP)

    @staticmethod
    def _persona_messages(tx: Tx, persona: str) -> int:
        """The persona's number of messages (migration 12): read with a search's ``BEGIN``
        (:meth:`_search_read`), else now."""
        if isinstance(tx, PgTx) and tx.counted is not None and tx.counted[0] == persona:
            return tx.counted[1]
        found = tx.fetch("SELECT messages FROM persona_counts WHERE persona = ?", [persona])
        return int(found[0][0]) if found else 0

    @staticmethod
    def _plan_afresh(tx: Tx) -> None:
        """Plan each statement of this transaction with its values (:data:`CUSTOM_PLANS`),
        unless its start asked for that already."""
        if not (isinstance(tx, PgTx) and tx.custom_plans):
            tx.run(CUSTOM_PLANS)
            if isinstance(tx, PgTx):
                tx.custom_plans = True

    def _shares(
        self, tx: Tx, words: Sequence[str], filters: tuple[str, list[Any]]
    ) -> list[float] | None:
        """Each word's estimated share of the messages (:class:`TextStats`, read again every
        :data:`STATS_SECONDS`), or None to ask the planner instead: when the search has
        filters (the planner weighs them too) or the texts have no statistics yet."""
        if filters[0]:
            return None
        now = time.monotonic()
        if self._text_stats is None or now - self._text_stats[0] > STATS_SECONDS:
            self._text_stats = (now, read_text_stats(tx, self.schema))
        stats = self._text_stats[1]
        return None if stats is None else [stats.share(word) for word in words]

    def _found(
        self,
        tx: Tx,
        persona: str,
        indexed: Sequence[str],
        short: Sequence[str],
        filters: tuple[str, list[Any]],
        limit: int,
    ) -> tuple[str, list[Any]]:
        """``FROM …`` SQL (and its parameters) of the persona's messages holding every word
        and passing the filters: with the words' trigram keys (migration 10) when they cost
        less than the newest rows' walk (:func:`keys_cost_less`, the words' shares from the
        statistics of the texts) or, for a search with filters or a store without
        statistics, when the planner expects at most ``limit`` matches (:func:`few_matches`,
        asked with the ``ILIKE`` it estimates from the texts' statistics); else without, for
        the newest rows' plan."""
        where, params = filters
        self._plan_afresh(tx)
        shorts = "".join(f"AND {self._short_like} " for _ in short)
        values = [persona, *(like_pattern(word) for word in (*indexed, *short)), *params]
        found = "".join(f"AND {holds_word(word)} " for word in indexed)
        found = f"FROM messages m WHERE m.persona = ? {found}{shorts}{where}"
        shares = self._shares(tx, (*indexed, *short), filters)
        if shares is not None:  # as the planner would: the words' shares independent
            messages = self._persona_messages(tx, persona)
            few = keys_cost_less(messages * math.prod(shares), limit, messages)
        else:
            planned = "".join(f"AND {holds_word(word, planning=True)} " for word in indexed)
            few = few_matches(
                tx, f"FROM messages m WHERE m.persona = ? {planned}{shorts}{where}", values,
                limit)
        if few:
            found += "".join(f"AND {PERSONA_GRAMS_FUNCTION}(m.persona, m.content) @> "
                             f"{PERSONA_GRAMS_FUNCTION}(?, ?) " for _ in indexed)
            values += [value for word in indexed for value in (persona, word)]
        return found, values

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
        """The GIN index of the messages' short pieces (migration 8), up to ``upto``."""
        sql, params = conditions
        self._plan_afresh(tx)
        pieces = ", ".join("lower(?)" for _ in words)
        has = "&&" if any_word else "@>"
        return tx.fetch(
            "SELECT m.id, m.content FROM messages m WHERE m.persona = ? AND m.id <= ? AND "
            f"{SHORT_KEYS_FUNCTION}(m.content) {has} ARRAY[{pieces}]::text[] "
            f"{sql}ORDER BY m.id DESC LIMIT ?",
            [persona, upto, *words, *params, limit],
        )

    def _match_ids(
        self, tx: Tx, persona: str, word: str, filters: tuple[str, list[Any]], limit: int
    ) -> list[int]:
        """:meth:`_matches` of one indexed word, without the text."""
        found, values = self._found(tx, persona, (word,), (), filters, limit)
        rows = tx.fetch(f"SELECT m.id {found}ORDER BY m.id DESC LIMIT ?", [*values, limit])
        return [row[0] for row in rows]

