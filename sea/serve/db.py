"""The server's own tables, kept in the store's database.

``sea serve`` keeps what it must share between its processes (conversations, runs, their
event logs, API keys) in the database of the persona store it serves: in the SQLite file
beside SAIMemory's tables, or in the PostgreSQL schema the DSN names (``?schema=NAME``,
default ``public``). No correctness rests on one process's memory: two servers on one
database see the same rows.

Statements are written once with ``?`` placeholders and run on either backend. Calls are
blocking; the server runs them in a worker thread (``anyio.to_thread``). One connection
per database, used under a lock: the server's statements are short, and the store's own
connections are separate.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Protocol

from saimemory.postgres import split_schema
from sea.errors import ServerDatabaseError, UsageError

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
Row = tuple[Any, ...]
_CREATE_LOCK = 0x5EA5E7  # advisory lock held while the server's tables are created
Backend = Literal["sqlite", "postgres"]


class Cursor(Protocol):
    """What a statement returns: the rows, and how many rows a write touched."""

    rowcount: int

    def fetchall(self) -> list[Row]: ...


class ServerDB:
    """A connection to the server's tables, in the store's database.

    Args:
        location: The store: a SQLite file, or a ``postgresql://`` DSN (``?schema=NAME``
            allowed; needs the ``postgres`` extra).
        share_lock: The SQLite store's connection lock
            (:attr:`saimemory.sqlite.SQLiteStore.connection_lock`), for a server whose
            store is open in this process: its writes and the store's then take turns in
            this process instead of in SQLite's busy handler (ignored on PostgreSQL).

    Raises:
        ServerDatabaseError: the database cannot be opened.
    """

    def __init__(self, location: str, *, share_lock: Any = None) -> None:
        self.location = location
        self.backend: Backend = "postgres" if location.startswith(POSTGRES_SCHEMES) else "sqlite"
        shared = share_lock if self.backend == "sqlite" else None
        self._lock = shared or threading.RLock()
        self._conn: Any = self._connect()

    def _connect(self) -> Any:
        if self.backend == "sqlite":
            path = Path(self.location).expanduser()
            try:
                lite = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                       timeout=30.0)
                lite.execute("PRAGMA journal_mode=WAL")
                lite.execute("PRAGMA synchronous=NORMAL")  # as the store's: no fsync a commit
            except sqlite3.Error as exc:
                raise ServerDatabaseError(
                    f"cannot open the server's tables in {path}: {exc}") from None
            return lite
        try:
            import psycopg
        except ImportError:
            raise UsageError(
                "a postgresql:// store needs the postgres extra: pip install -e '.[postgres]'"
            ) from None
        dsn, schema = split_schema(self.location)
        try:
            conn: Any = psycopg.connect(dsn, autocommit=True)
            name = schema or "public"
            with conn.transaction():  # two processes that start together create it once
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_CREATE_LOCK,))
                conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{name}"')
            conn.execute(f'SET search_path TO "{name}"')
        except psycopg.Error as exc:
            raise ServerDatabaseError(
                f"cannot open the server's tables in the PostgreSQL store: {exc}") from None
        return conn

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.backend == "postgres" else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Run one statement (``?`` placeholders) and return its cursor, committed unless a
        :meth:`transaction` is open."""
        with self._lock:
            try:
                cursor: Cursor = self._conn.execute(self._sql(sql), tuple(params))
            except Exception as exc:
                if _is_database_error(exc):
                    raise ServerDatabaseError(f"the server's database failed: {exc}") from None
                raise
            return cursor

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """The rows of a query."""
        with self._lock:
            return list(self.execute(sql, params).fetchall())

    def fetch_one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """The first row of a query, or None."""
        rows = self.fetch(sql, params)
        return rows[0] if rows else None

    @contextmanager
    def transaction(self) -> Iterator[ServerDB]:
        """Statements run inside commit together or not at all (the lock is held)."""
        with self._lock:
            if self.backend == "sqlite":
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            else:
                with self._conn.transaction():
                    yield self

    def create(self, ddl: Sequence[str]) -> None:
        """Run idempotent ``CREATE ... IF NOT EXISTS`` statements (each table's owner
        module gives its own)."""
        with self.transaction():
            if self.backend == "postgres":  # processes that start together create once
                self.execute("SELECT pg_advisory_xact_lock(?)", (_CREATE_LOCK,))
            for statement in ddl:
                self.execute(statement)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


def _is_database_error(exc: Exception) -> bool:
    if isinstance(exc, sqlite3.Error):
        return True
    module = type(exc).__module__
    return module.startswith("psycopg")
