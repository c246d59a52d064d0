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

The transactions are :mod:`saimemory.pg_tx`'s, the search queries :mod:`saimemory.pg_search`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from saimemory import one_read
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
from saimemory.migrations import APPEND_FUNCTION, CONVERSATION_ROW, POSTGRES_MIGRATIONS, upgrade
from saimemory.pg_search import (
    CUSTOM_PLANS,
    STATS_SECONDS,
    PgSearch,
    TextStats,
    estimated_rows,
    few_matches,
    holds_word,
    keys_cost_less,
    read_text_stats,
)
from saimemory.pg_tx import AloneTx, PgTx, pgsql, psycopg, to_psycopg, write_start
from saimemory.pin_rows import PINS_SQL, SHORT_TERM_SQL, pins_of, short_term_of
from saimemory.prepare import PreparedMessage, prepare, to_micros
from saimemory.records import ROOT_SCOPE, HistoryBudget, Message, NewMessage
from saimemory.sqlbase import (
    COLUMNS,
    HISTORY_PAGE,
    MAIN_COMMITTED,
    Row,
    Tx,
    constraint_error,
    main_thread_id,
)

__all__ = [
    "DEFAULT_SCHEMA",
    "SCHEMA_PARAM",
    "STATS_SECONDS",
    "PostgresStore",
    "TextStats",
    "estimated_rows",
    "few_matches",
    "holds_word",
    "keys_cost_less",
    "read_text_stats",
    "split_schema",
]

DEFAULT_SCHEMA = "public"
SCHEMA_PARAM = "schema"
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_MIGRATION_LOCK = 0x5EA5A1  # advisory lock id held while migrating
T = TypeVar("T")
_APPEND = (
    f"SELECT new_id, new_thread FROM {APPEND_FUNCTION}(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
    "%s, %s::text[], %s, %s, %s, %s)"
)


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


class PostgresStore(PgSearch):
    """A persona message store in a PostgreSQL database, its tables in one schema."""

    migrations = POSTGRES_MIGRATIONS
    _columns = f"{COLUMNS}, m.tags"
    """Each row holds its message's own tags, in order, as an array (NULL for none; migration
    14): a read of messages reads no other table."""
    _conversation = (f"messages m WHERE m.persona = ? AND m.thread = ? AND {CONVERSATION_ROW}"
                     f" AND {MAIN_COMMITTED}", "m.id")  # migration 17's index
    _extra_columns = ("tags",)
    _driver_error = psycopg.Error if psycopg is not None else Exception
    _lock_conns: PgLockConnections | None = None
    """Connections of the persona locks (made with the first lock)."""

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
                upgrade(PgTx(self._conn), self.migrations, self.where)
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
                self._conn.execute(pgsql.SQL("; ").join(write_start(personas)))
            return PgTx(self._conn)

        return self._started(start)

    def _search_read(self, persona: str) -> AbstractContextManager[Tx]:
        """A read transaction whose start, in one round trip, also asks for custom plans
        (:data:`CUSTOM_PLANS`) and reads the persona's number of messages (migration 12),
        which every search of indexed words weighs or estimates with."""

        def start() -> Tx:
            cursor = self._conn.execute(pgsql.SQL(
                "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; {}; "
                "SELECT messages FROM persona_counts WHERE persona = {}").format(
                    pgsql.SQL(CUSTOM_PLANS), pgsql.Literal(persona)))
            cursor.nextset()  # past the BEGIN's and the SET's results
            cursor.nextset()
            found = cursor.fetchall()
            return PgTx(self._conn, counted=(persona, int(found[0][0]) if found else 0))

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
            to_micros(self._now()), recovering, row.line_role, row.line_scope,
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
                cursors = [self._conn.execute(to_psycopg(sql), list(params))
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
        yield AloneTx(self._fetch_alone)

    def _fetch_alone(self, sql: str, params: Sequence[Any]) -> list[Row]:
        """One statement in autocommit: one round trip. It writes nothing, so a connection
        found lost, before or during it, is reopened and the statement run once more."""
        return self._reading(lambda: self._rows(sql, params))

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Row]:
        """The rows of one statement (``?`` placeholders) on the store's connection."""
        return list(self._conn.execute(to_psycopg(sql), list(params)).fetchall())

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
        if isinstance(tx, PgTx) and tx.counted is not None:  # a search's (:meth:`_search_read`)
            return tx.fetch_and_commit(sql, params)
        return tx.fetch(sql, params)

    def _row_extra(self, row: PreparedMessage) -> tuple[Any, ...]:
        """The row holds the message's own tags too (NULL for none), as the append function
        writes them."""
        return (list(row.tags) or None,)

    def _messages(self, tx: Tx, rows: list[Row]) -> list[Message]:
        """The messages of rows of :attr:`_columns`, which hold their tags."""
        return one_read.tagged(rows)

    def _write_calls(self, records: Sequence[CallRecord], personas: list[str]) -> None:
        """As :meth:`SqlStore._write_calls` (one transaction holding each persona's lock),
        in one round trip instead of three: ``BEGIN``, the locks, the inserts and ``COMMIT``
        go as one simple query, the values as literals psycopg quotes. A connection found
        lost before is reopened first; one lost during it is not asked again, since the
        records may be committed (:class:`StoreUnavailableError` says so)."""
        statements = write_start(personas)
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
