"""The PostgreSQL backend (psycopg 3, the ``postgres`` extra): same contract as SQLite.

Every write is one transaction that first takes a transaction-level advisory lock keyed by
the persona, so writers for one persona are serialised and ids (an identity column) grow
in commit order for that persona. Full-text search finds a rare word of three characters
or more, Japanese included, by a GIN index of the hashed trigrams of each persona's
messages (migration 10) and a common one by a walk of the newest; a GIN index of each
message's pieces of one and two characters finds the shorter words.

The tables live in one schema (``public`` unless the DSN says ``?schema=NAME`` or the
caller passes ``schema``), so several stores can share a database. A connection lost
before a transaction starts is reopened once, transparently; one lost inside a call fails
that call with :class:`~saimemory.errors.StoreUnavailableError`, and the next call
reconnects. An append is one statement (a function of the schema, migration 9): one lost
during it is asked again on a new connection, which finds the message if the first try
committed it.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from saimemory import one_read
from saimemory.all_match import K1, B, fold_free
from saimemory.any_match import COLLECTION_CAP, WORD_WINDOW
from saimemory.base import DEFAULT_BUDGET, MainContext
from saimemory.budget import clamp, spend
from saimemory.call_rows import insert_statements
from saimemory.calls import CallRecord
from saimemory.errors import (
    InvalidQueryError,
    MemoryStoreError,
    NotFoundError,
    SchemaError,
    StoreUnavailableError,
)
from saimemory.fold import cut_below, fold_from_page, nothing_cut
from saimemory.locks import PersonaLock, PgLockConnections, PostgresPersonaLock
from saimemory.migrations import (
    APPEND_FUNCTION,
    CONVERSATION_ROW,
    LOWER_COLUMN,
    PERSONA_GRAMS_FUNCTION,
    POSTGRES_MIGRATIONS,
    SHORT_KEYS_FUNCTION,
    upgrade,
)
from saimemory.pin_rows import PINS_SQL, SHORT_TERM_SQL, pins_of, short_term_of
from saimemory.prepare import PreparedMessage, prepare, to_micros
from saimemory.records import ROOT_SCOPE, HistoryBudget, Message, NewMessage
from saimemory.search_terms import RANK_WINDOW, Terms, like_pattern
from saimemory.sqlbase import (
    COLUMNS,
    HISTORY_PAGE,
    Row,
    SqlStore,
    Tx,
    constraint_error,
    main_thread_id,
)
from saimemory.stop_words import is_stop_word

psycopg: Any
pgsql: Any
try:
    import psycopg
    from psycopg import sql as pgsql
except ImportError:  # pragma: no cover - depends on the installed extras
    psycopg = None
    pgsql = None

DEFAULT_SCHEMA = "public"
SCHEMA_PARAM = "schema"
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_MIGRATION_LOCK = 0x5EA5A1  # advisory lock id held while migrating
_PLACEHOLDER = re.compile(r"\?")
T = TypeVar("T")
_APPEND = (
    f"SELECT new_id, new_thread FROM {APPEND_FUNCTION}(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
    "%s, %s::text[], %s, %s)"
)


def _pg(sql: str) -> str:
    return _PLACEHOLDER.sub("%s", sql.replace("%", "%%"))


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

_CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan"
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


def split_schema(dsn: str) -> tuple[str, str | None]:
    """A ``postgresql://`` DSN without its ``schema`` query parameter, and that schema."""
    parts = urlsplit(dsn)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [value for key, value in query if key == SCHEMA_PARAM]
    if len(schemas) > 1:
        raise StoreUnavailableError(f"the DSN names {SCHEMA_PARAM}= {len(schemas)} times")
    # quote, not quote_plus: libpq reads %20 as a space but leaves a + as it is
    rest = urlencode([(key, value) for key, value in query if key != SCHEMA_PARAM],
                     quote_via=quote)
    return urlunsplit(parts._replace(query=rest)), (schemas[0] if schemas else None)


def _write_start(personas: Sequence[str]) -> list[Any]:
    """The statements that start a write transaction: ``BEGIN`` and each persona's lock (the
    key migration 9's append function takes too), for one simple query."""
    return [pgsql.SQL("BEGIN"), *(
        pgsql.SQL("SELECT pg_advisory_xact_lock(hashtextextended({}, 0))").format(
            pgsql.Literal(persona)) for persona in personas)]


class _PgTx:
    """A :class:`~saimemory.sqlbase.Tx` over one psycopg connection. A search's transaction
    knows its persona's number of messages (``counted``) and that it plans each statement
    afresh (``custom_plans``): both came with its ``BEGIN``."""

    def __init__(self, conn: Any, counted: tuple[str, int] | None = None) -> None:
        self._conn = conn
        self.counted = counted
        self.custom_plans = counted is not None

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return list(self._conn.execute(_pg(sql), list(params)).fetchall())

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._conn.execute(_pg(sql), list(params))

    def fetch_and_commit(self, sql: str, params: Sequence[Any]) -> list[Row]:
        """The rows of ``sql``, the transaction's last statement, and the transaction
        committed in the same round trip (pipelined: the ``COMMIT`` does not run if the
        statement fails, and the caller's rollback ends the transaction as before)."""
        if not psycopg.Pipeline.is_supported():
            return self.fetch(sql, params)  # committed by the transaction's end, as before
        with self._conn.pipeline():
            cursor = self._conn.execute(_pg(sql), list(params))
            self._conn.execute("COMMIT")
        return list(cursor.fetchall())


class _AloneTx:
    """A :class:`~saimemory.sqlbase.Tx` for a read of exactly one statement, run alone in
    autocommit (one round trip, its own snapshot); a second statement would read another
    snapshot, so it is refused."""

    def __init__(self, fetch: Callable[[str, Sequence[Any]], list[Row]]) -> None:
        self._fetch: Callable[[str, Sequence[Any]], list[Row]] | None = fetch

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        fetch, self._fetch = self._fetch, None
        if fetch is None:
            raise AssertionError("a read of one statement ran a second one")
        return fetch(sql, params)

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        raise AssertionError("a read of one statement cannot write")


class PostgresStore(SqlStore):
    """A persona message store in a PostgreSQL database, its tables in one schema."""

    migrations = POSTGRES_MIGRATIONS
    _columns = f"{COLUMNS}, m.tags"
    """Each row holds its message's own tags, in order, as an array (NULL for none; migration
    14): a read of messages reads no other table."""
    _conversation = (f"messages m WHERE m.persona = ? AND m.thread = ? AND {CONVERSATION_ROW}",
                     "m.id")  # migration 17's index
    _extra_columns = ("tags",)
    _driver_error = psycopg.Error if psycopg is not None else Exception
    _short_like = f"m.{LOWER_COLUMN} LIKE lower(?) ESCAPE '\\'"
    _lock_conns: PgLockConnections | None = None
    """Connections of the persona locks (made with the first lock)."""
    _text_stats: tuple[float, TextStats | None] | None = None
    """When (``time.monotonic``) the statistics of the texts were read, and what they were."""

    def __init__(self, dsn: str, *, schema: str | None = None) -> None:
        if psycopg is None:
            raise StoreUnavailableError(
                "the PostgreSQL backend needs psycopg: pip install 'sea-runtime[postgres]'"
            )
        self._dsn, in_dsn = split_schema(dsn)
        if schema is not None and in_dsn is not None and schema != in_dsn:
            raise StoreUnavailableError(
                f"schema {schema!r} given, but the DSN says {SCHEMA_PARAM}={in_dsn}")
        self.schema = schema or in_dsn or DEFAULT_SCHEMA
        if not _SCHEMA_NAME.match(self.schema):
            raise StoreUnavailableError(
                f"schema name {self.schema!r} must match {_SCHEMA_NAME.pattern}")
        self.where = f"PostgreSQL schema {self.schema!r}"
        self._closed = False
        self._conn = self._connect()
        self._start()

    def _connect(self) -> Any:
        try:
            conn = psycopg.connect(self._dsn, autocommit=True)
        except psycopg.Error as exc:
            raise StoreUnavailableError(f"cannot connect to PostgreSQL: {exc}") from None
        try:
            conn.execute(pgsql.SQL("SET search_path TO {}, public").format(
                pgsql.Identifier(self.schema)))
        except psycopg.Error as exc:
            conn.close()
            raise self._translate(exc) from None
        return conn

    def _setup(self) -> None:
        try:
            with self._conn.transaction():
                self._conn.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATION_LOCK])
                self._conn.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                    pgsql.Identifier(self.schema)))
                self._check_existing()
                upgrade(_PgTx(self._conn), self.migrations, self.where)
        except psycopg.Error as exc:
            raise self._translate(exc) from None

    def _check_existing(self) -> None:
        names = {row[0] for row in self._conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            [self.schema])}
        if names and "schema_migrations" not in names and "messages" in names:
            raise SchemaError(
                f"{self.where} has a messages table but no schema_migrations: not a SAIMemory "
                "store; it was not changed"
            )

    def _translate(self, exc: Exception) -> MemoryStoreError:
        if isinstance(exc, psycopg.errors.IntegrityError):
            return constraint_error(self.where, exc)
        if self._lost(exc):
            return StoreUnavailableError(
                f"{self.where}: lost the connection to PostgreSQL ({exc}); this call did not "
                "complete (a write in it may or may not be committed). The next call reconnects."
            )
        if isinstance(exc, psycopg.OperationalError):
            return StoreUnavailableError(f"{self.where}: {exc}")
        return MemoryStoreError(f"{self.where}: {type(exc).__name__}: {exc}")

    def _check_open(self) -> None:
        """Refuse a call to a closed store (the caller holds the store's lock)."""
        if self._closed:
            raise StoreUnavailableError(f"{self.where}: the store is closed")

    def _lost(self, exc: Exception | None = None) -> bool:
        """Whether the connection is gone. psycopg marks it broken when libpq saw it end; a
        socket the kernel closed under a waiting call raises an ``OperationalError`` with no
        SQLSTATE (no server said anything) before libpq notices, so that error counts too."""
        if self._conn.closed or self._conn.broken:
            return True
        return isinstance(exc, psycopg.OperationalError) and exc.sqlstate is None

    def _begin(self, personas: Sequence[str] | None) -> Tx:
        """Start a transaction and take the persona locks."""

        def start() -> Tx:
            if personas is None:
                self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            else:  # one round trip: the statements go as one simple query
                self._conn.execute(pgsql.SQL("; ").join(_write_start(personas)))
            return _PgTx(self._conn)

        return self._started(start)

    def _search_read(self, persona: str) -> AbstractContextManager[Tx]:
        """A read transaction whose start, in one round trip, also asks for custom plans
        (:data:`_CUSTOM_PLANS`) and reads the persona's number of messages (migration 12),
        which every search of indexed words weighs or estimates with."""

        def start() -> Tx:
            cursor = self._conn.execute(pgsql.SQL(
                "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; {}; "
                "SELECT messages FROM persona_counts WHERE persona = {}").format(
                    pgsql.SQL(_CUSTOM_PLANS), pgsql.Literal(persona)))
            cursor.nextset()  # past the BEGIN's and the SET's results
            cursor.nextset()
            found = cursor.fetchall()
            return _PgTx(self._conn, counted=(persona, int(found[0][0]) if found else 0))

        return self._transaction(None, begin=lambda: self._started(start))

    def _started(self, start: Callable[[], Tx]) -> Tx:
        """``start()`` a transaction. A connection found lost here has done nothing of
        this call yet, so it is reopened and the start tried once more."""
        self._check_open()
        try:
            return self._once_more_if_lost(start)
        except psycopg.Error as exc:
            self._end(commit=False)
            raise self._translate(exc) from None

    def _once_more_if_lost(self, work: Callable[[], T]) -> T:
        """``work()`` on the connection, reopened first if found lost; if it is lost during
        ``work`` (which must then have changed nothing), reopened and ``work`` run once more.
        Any other error, or a second loss, is raised as psycopg raised it."""
        for attempt in range(2):
            if self._lost():
                self._conn = self._connect()
            try:
                return work()
            except psycopg.Error as exc:
                if attempt == 0 and self._lost(exc):
                    self._conn.close()
                    continue
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def append(self, message: NewMessage) -> Message:
        """Store one message by one statement, one round trip (migration 9's function, which
        takes the persona's lock as a write transaction does).

        A connection found lost before the call is reopened first. One lost during the
        call leaves the append either committed whole or not at all: the function is asked
        again on a new connection, and it returns the message the first try committed (found
        by its uid, time and text) rather than writing it twice.
        """
        row = prepare(message, self._now())
        with self._lock:
            self._check_open()
            if self._lost():
                self._conn = self._connect()
            try:
                return self._append_row(row, recovering=False)
            except psycopg.Error as exc:
                if not self._lost(exc):
                    raise self._translate(exc) from None
                lost = self._translate(exc)
            self._conn.close()
            try:
                self._conn = self._connect()
            except StoreUnavailableError:
                raise lost from None  # it says the append may or may not be committed
            try:
                return self._append_row(row, recovering=True)
            except psycopg.Error as exc:
                raise self._translate(exc) from None

    def _append_row(self, row: PreparedMessage, *, recovering: bool) -> Message:
        found = self._conn.execute(_APPEND, [
            row.persona, row.thread, row.role, row.content, row.created_us, row.pulse_id,
            row.scope, row.metadata_json, row.playbook, row.node, row.uid, list(row.tags),
            to_micros(self._now()), recovering,
        ]).fetchall()
        if not found:
            raise NotFoundError(f"persona {row.persona!r} has no thread {row.thread!r}")
        message_id, thread = found[0]
        return row.to_message(int(message_id), thread)

    def history(
        self,
        persona: str,
        *,
        pulse_id: str | None = None,
        scope: str = ROOT_SCOPE,
        budget: HistoryBudget = DEFAULT_BUDGET,
        thread: str | None = None,
    ) -> list[Message]:
        """The pulse rule, in one round trip when one page of earlier conversation holds the
        budget (the default's does); a larger budget reads page by page in a transaction."""
        if budget.max_messages > HISTORY_PAGE:
            return super().history(
                persona, pulse_id=pulse_id, scope=scope, budget=budget, thread=thread)
        thread_id = thread if thread is not None else main_thread_id(persona)
        return one_read.history(self._fetch_alone, persona, thread_id, pulse_id, scope, budget)

    def main_context(
        self,
        persona: str,
        *,
        pulse_id: str | None = None,
        scope: str = ROOT_SCOPE,
        budget: HistoryBudget = DEFAULT_BUDGET,
        thread: str | None = None,
        short_term: bool = True,
        fold: int = 0,
    ) -> MainContext:
        """History (for a budget of one page, as :meth:`history` reads it in one statement),
        pins and short-term memory in one round trip: the statements are pipelined, each
        as it runs alone. What a summary would fold (``fold``) comes in the same round trip:
        the history's page of earlier conversation reaches ``fold`` messages further, which
        hold every message the separate reads would find (:func:`saimemory.fold.fold_from_page`)."""
        if budget.max_messages > HISTORY_PAGE:
            return super().main_context(persona, pulse_id=pulse_id, scope=scope, budget=budget,
                                        thread=thread, short_term=short_term, fold=fold)
        folding = fold if fold > 0 and short_term and thread is None else 0
        thread_id = thread if thread is not None else main_thread_id(persona)
        rows = self._fetch_together([
            one_read.history_statement(persona, thread_id, pulse_id, scope, budget, folding),
            (PINS_SQL, [persona]), *([(SHORT_TERM_SQL, [persona])] if short_term else [])])
        page, current = one_read.history_parts(rows[0])
        history = spend(page, budget) + clamp(current, budget)
        summary = short_term_of(rows[2]) if short_term else None
        before = cut_below(history, pulse_id)
        if not folding or nothing_cut(before, budget.max_messages):
            return MainContext(history, pins_of(rows[1]), summary)
        covered = summary.through_id if summary is not None else 0
        cut, unfolded = fold_from_page(page, before, covered, folding)
        return MainContext(history, pins_of(rows[1]), summary, cut, unfolded)

    def _fetch_together(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Row]]:
        """Read statements that write nothing in one round trip (psycopg's pipeline mode):
        sent together, then their rows, in order; one after another where the libpq under
        psycopg has no pipeline mode (before PostgreSQL 14's). A connection found lost,
        before or during them, is reopened and the statements sent once more."""

        def work() -> list[list[Row]]:
            if not psycopg.Pipeline.is_supported():
                return [self._rows(sql, params) for sql, params in statements]
            with self._conn.pipeline():
                cursors = [self._conn.execute(_pg(sql), list(params))
                           for sql, params in statements]
            return [list(cursor.fetchall()) for cursor in cursors]

        return self._reading(work)

    def recent(self, persona: str, *, limit: int = 20, thread: str | None = None) -> list[Message]:
        """The newest ``limit`` messages of a persona, oldest first, in one round trip."""
        if limit < 0:
            raise InvalidQueryError(f"limit must be >= 0, got {limit}")
        return one_read.recent(self._fetch_alone, persona, limit, thread)

    @contextmanager
    def _read_one(self) -> Iterator[Tx]:
        """A read of one statement, alone in autocommit: one round trip instead of three."""
        yield _AloneTx(self._fetch_alone)

    def _fetch_alone(self, sql: str, params: Sequence[Any]) -> list[Row]:
        """One statement in autocommit: one round trip. It writes nothing, so a connection
        found lost, before or during it, is reopened and the statement run once more."""
        return self._reading(lambda: self._rows(sql, params))

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Row]:
        """The rows of one statement (``?`` placeholders) on the store's connection."""
        return list(self._conn.execute(_pg(sql), list(params)).fetchall())

    def _reading(self, work: Callable[[], T]) -> T:
        """``work()``, which only reads, under the store's lock: a connection found lost,
        before or during it, is reopened and ``work`` run once more; a driver's error is
        raised as the store's."""
        with self._lock:
            self._check_open()
            try:
                return self._once_more_if_lost(work)
            except psycopg.Error as exc:
                raise self._translate(exc) from None

    def _end(self, *, commit: bool) -> None:
        if self._conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            return  # ended already: a search's last read committed it (:meth:`_last_fetch`)
        if commit:
            self._conn.execute("COMMIT")
        elif not self._lost():
            try:
                self._conn.execute("ROLLBACK")
            except psycopg.Error:
                pass  # the connection broke meanwhile; the server rolled back

    def _last_fetch(self, tx: Tx, sql: str, params: Sequence[Any]) -> list[Row]:
        """A search's last read and its transaction's ``COMMIT`` in one round trip: a
        search reads only, so nothing is committed that its end would not commit."""
        if isinstance(tx, _PgTx) and tx.counted is not None:  # a search's (:meth:`_search_read`)
            return tx.fetch_and_commit(sql, params)
        return tx.fetch(sql, params)

    def _row_extra(self, row: PreparedMessage) -> tuple[Any, ...]:
        """The row holds the message's own tags too (NULL for none), as the append function
        writes them."""
        return (list(row.tags) or None,)

    def _messages(self, tx: Tx, rows: list[Row]) -> list[Message]:
        """The messages of rows of :attr:`_columns`, which hold their tags."""
        return one_read.tagged(rows)

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
        if isinstance(tx, _PgTx) and tx.counted is not None and tx.counted[0] == persona:
            return tx.counted[1]
        found = tx.fetch("SELECT messages FROM persona_counts WHERE persona = ?", [persona])
        return int(found[0][0]) if found else 0

    @staticmethod
    def _plan_afresh(tx: Tx) -> None:
        """Plan each statement of this transaction with its values (:data:`_CUSTOM_PLANS`),
        unless its start asked for that already."""
        if not (isinstance(tx, _PgTx) and tx.custom_plans):
            tx.run(_CUSTOM_PLANS)
            if isinstance(tx, _PgTx):
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

    def _write_calls(self, records: Sequence[CallRecord], personas: list[str]) -> None:
        """As :meth:`SqlStore._write_calls` (one transaction holding each persona's lock),
        in one round trip instead of three: ``BEGIN``, the locks, the inserts and ``COMMIT``
        go as one simple query, the values as literals psycopg quotes. A connection found
        lost before is reopened first; one lost during it is not asked again, since the
        records may be committed (:class:`StoreUnavailableError` says so)."""
        statements = _write_start(personas)
        for sql, params in insert_statements(records, to_micros(self._now())):
            statements.append(pgsql.SQL(sql.replace("?", "{}")).format(
                *(pgsql.Literal(value) for value in params)))
        statements.append(pgsql.SQL("COMMIT"))
        query = pgsql.SQL("; ").join(statements)
        with self._lock:
            self._check_open()
            try:
                if self._lost():
                    self._conn = self._connect()
                self._conn.execute(query)
            except psycopg.Error as exc:
                self._end(commit=False)
                raise self._translate(exc) from None

    def persona_lock(self, persona: str) -> PersonaLock:
        """A session advisory lock on ``persona`` in this store's schema (its connection
        comes from a small pool of the store's own)."""
        with self._lock:
            self._check_open()
            if self._lock_conns is None:
                self._lock_conns = PgLockConnections(self._connect)
            return PostgresPersonaLock(self._lock_conns, self.schema, persona)

    def optimize(self) -> None:
        """``VACUUM (ANALYZE)`` of the store's tables: the GIN indexes' pending entries (a
        search scans them one by one) moved into the indexes, dead rows' space made
        reusable, and the planner's statistics refreshed. VACUUM runs outside any
        transaction, on the store's autocommit connection; readers and writers go on."""
        with self._lock:
            self._check_open()
            try:
                self._once_more_if_lost(lambda: self._conn.execute(
                    "VACUUM (ANALYZE) messages, message_tags, threads"))
            except psycopg.Error as exc:
                raise self._translate(exc) from None

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._closed = True
            self._conn.close()
            if self._lock_conns is not None:
                self._lock_conns.close()

    def drop_schema(self) -> None:
        """Drop this store's schema and everything in it (for tests and benchmarks)."""
        with self._lock:
            self._conn.execute(
                pgsql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(pgsql.Identifier(self.schema))
            )
