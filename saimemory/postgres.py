"""The PostgreSQL backend (psycopg 3, the ``postgres`` extra): same contract as SQLite.

Every write is one transaction that first takes a transaction-level advisory lock keyed by
the persona, so writers for one persona are serialised and ids (an identity column) grow
in commit order for that persona. Full-text search uses ``pg_trgm``: a GIN trigram index
answers ``ILIKE '%word%'`` for words of three characters or more, Japanese included.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from typing import Any

from saimemory.errors import (
    InvalidMessageError,
    MemoryStoreError,
    SchemaError,
    StoreUnavailableError,
)
from saimemory.migrations import (
    MIGRATIONS_TABLE,
    POSTGRES_MIGRATIONS,
    Migration,
    check_sequence,
)
from saimemory.prepare import to_micros
from saimemory.search_terms import RANK_WINDOW, Terms, like_pattern, occurrences
from saimemory.sqlbase import COLUMNS, Row, SqlStore, Tx

psycopg: Any
pgsql: Any
try:
    import psycopg
    from psycopg import sql as pgsql
except ImportError:  # pragma: no cover - depends on the installed extras
    psycopg = None
    pgsql = None

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_MIGRATION_LOCK = 0x5EA5A1  # advisory lock id held while migrating
_PLACEHOLDER = re.compile(r"\?")


def _pg(sql: str) -> str:
    return _PLACEHOLDER.sub("%s", sql.replace("%", "%%"))


class _PgTx:
    """A :class:`~saimemory.sqlbase.Tx` over one psycopg connection."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return list(self._conn.execute(_pg(sql), list(params)).fetchall())

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._conn.execute(_pg(sql), list(params))


def _translate(exc: Exception, where: str) -> MemoryStoreError:
    if psycopg is not None and isinstance(exc, psycopg.errors.IntegrityError):
        return InvalidMessageError(f"{where}: constraint violated, nothing written: {exc}")
    if psycopg is not None and isinstance(exc, psycopg.OperationalError):
        return StoreUnavailableError(f"{where}: {exc}")
    return MemoryStoreError(f"{where}: {type(exc).__name__}: {exc}")


class PostgresStore(SqlStore):
    """A persona message store in a PostgreSQL database (tables in ``schema``, default public)."""

    def __init__(self, dsn: str, *, schema: str = "public") -> None:
        if psycopg is None:
            raise StoreUnavailableError(
                "the PostgreSQL backend needs psycopg: pip install 'sea-runtime[postgres]'"
            )
        if not _SCHEMA_NAME.match(schema):
            raise StoreUnavailableError(f"schema name {schema!r} must match {_SCHEMA_NAME.pattern}")
        self.schema = schema
        self._where = f"PostgreSQL schema {schema!r}"
        try:
            self._conn = psycopg.connect(dsn, autocommit=True)
        except psycopg.Error as exc:
            raise StoreUnavailableError(f"cannot connect to PostgreSQL: {exc}") from None
        self._lock = threading.RLock()
        try:
            self._setup()
        except BaseException:
            self._conn.close()
            raise

    def _setup(self) -> None:
        ident = pgsql.Identifier(self.schema)
        try:
            with self._conn.transaction():
                self._conn.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATION_LOCK])
                self._conn.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(ident))
                self._conn.execute(pgsql.SQL("SET search_path TO {}, public").format(ident))
                self._check_existing()
                self._conn.execute(MIGRATIONS_TABLE)
                for migration in POSTGRES_MIGRATIONS[self._version():]:
                    self._apply(migration)
        except psycopg.Error as exc:
            raise _translate(exc, self._where) from None

    def _check_existing(self) -> None:
        names = {row[0] for row in self._conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            [self.schema])}
        if names and "schema_migrations" not in names and "messages" in names:
            raise SchemaError(
                f"{self._where} has a messages table but no schema_migrations: not a SAIMemory "
                "store; it was not changed"
            )

    def _version(self) -> int:
        versions = [row[0] for row in self._conn.execute(
            "SELECT version FROM schema_migrations ORDER BY version")]
        try:
            return check_sequence(versions, POSTGRES_MIGRATIONS, self._where)
        except ValueError as exc:
            raise SchemaError(str(exc)) from None

    def _apply(self, migration: Migration) -> None:
        for statement in migration.statements:
            self._conn.execute(statement)
        self._conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_us) VALUES (%s, %s, %s)",
            [migration.version, migration.name, to_micros(datetime.now(UTC))],
        )

    def schema_version(self) -> int:
        """The schema version of the store."""
        with self._lock:
            return self._version()

    @contextmanager
    def _transaction(self, personas: Sequence[str]) -> Iterator[Tx]:
        with self._lock:
            try:
                with self._conn.transaction():
                    if not personas:
                        self._conn.execute(
                            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
                        )
                    for persona in personas:
                        self._conn.execute(
                            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [persona]
                        )
                    yield _PgTx(self._conn)
            except psycopg.Error as exc:
                raise _translate(exc, self._where) from None

    def _write(self, persona: str, *more: str) -> AbstractContextManager[Tx]:
        return self._transaction((persona, *more))

    def _read(self) -> AbstractContextManager[Tx]:
        return self._transaction(())

    def _search_rows(
        self, tx: Tx, persona: str, terms: Terms, filters: tuple[str, list[Any]], limit: int
    ) -> list[tuple[Row, float]]:
        where, params = filters
        # A generic plan cannot see the pattern, so it cannot tell a rare word (use the
        # trigram index) from a common one (walk the newest rows): plan each search afresh.
        tx.run("SET LOCAL plan_cache_mode = force_custom_plan")
        words = "".join("AND m.content ILIKE ? ESCAPE '\\' " for _ in terms.all)
        patterns = [like_pattern(term) for term in terms.all]
        if not terms.indexed:
            rows = tx.fetch(
                f"SELECT {COLUMNS} FROM messages m WHERE m.persona = ? {words}{where}"
                "ORDER BY m.id DESC LIMIT ?",
                [persona, *patterns, *params, limit],
            )
            return [(row, occurrences(row[4], terms)) for row in rows]
        rows = tx.fetch(
            "SELECT *, public.word_similarity(?, newest.content) AS score FROM ("
            f"SELECT {COLUMNS} FROM messages m WHERE m.persona = ? {words}{where}"
            "ORDER BY m.id DESC LIMIT ?) AS newest ORDER BY score DESC, id DESC LIMIT ?",
            [" ".join(terms.indexed), persona, *patterns, *params, RANK_WINDOW, limit],
        )
        return [(row[:-1], float(row[-1])) for row in rows]

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()

    def drop_schema(self) -> None:
        """Drop this store's schema and everything in it (for tests and benchmarks)."""
        with self._lock:
            self._conn.execute(
                pgsql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(pgsql.Identifier(self.schema))
            )
