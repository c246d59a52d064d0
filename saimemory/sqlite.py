"""The default backend: one SQLite file, WAL, a busy timeout, one transaction per write.

Writes take ``BEGIN IMMEDIATE`` (the database write lock) so writers from any number of
processes are serialised and ids grow in commit order. Full-text search uses FTS5 with
the trigram tokenizer: it matches any substring of three characters or more, which works
for Japanese (no word boundaries) as well as English, without a language-specific
tokenizer. Shorter words are matched by a substring test (see :mod:`saimemory.search_terms`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from saimemory.errors import (
    MemoryStoreError,
    SchemaError,
    StoreUnavailableError,
)
from saimemory.migrations import SQLITE_MIGRATIONS, current_version, upgrade
from saimemory.search_terms import Terms, fts5_query, like_pattern
from saimemory.sqlbase import Row, SqlStore, Tx, constraint_error

BUSY_TIMEOUT_S = 30.0


class _SqliteTx:
    """A :class:`~saimemory.sqlbase.Tx` over one sqlite3 connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self._conn.execute(sql, params).fetchall()

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._conn.execute(sql, params)


class SQLiteStore(SqlStore):
    """A persona message store in one SQLite file (created with its parents if missing)."""

    migrations = SQLITE_MIGRATIONS
    _driver_error = sqlite3.Error
    _like = "LIKE"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        if self.path.is_dir():
            raise StoreUnavailableError(f"{self.path} is a directory, not a database file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailableError(f"cannot open {self.path}: {exc}") from None
        self._start()

    def _setup(self) -> None:
        try:
            self._check_existing()
            self._enable_wal()
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.Error as exc:
            raise self._translate(exc) from None

    def _translate(self, exc: Exception) -> MemoryStoreError:
        text = str(exc)
        if isinstance(exc, sqlite3.IntegrityError):
            return constraint_error(self.where, exc)
        if "not a database" in text or "malformed" in text:
            return SchemaError(
                f"{self.path} is not a SQLite database or is corrupt ({text}); it was not "
                "changed. Restore it from a backup or an export, or try `sqlite3 FILE .recover`"
            )
        if isinstance(exc, sqlite3.OperationalError) and "locked" in text:
            return StoreUnavailableError(
                f"{self.path} stayed locked for {BUSY_TIMEOUT_S:.0f}s: {exc}")
        return MemoryStoreError(f"{self.path}: {type(exc).__name__}: {exc}")

    def _enable_wal(self) -> None:
        """Switch to WAL; the switch does not wait on the busy timeout, so retry it here."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        if str(mode).lower() != "wal":
            raise StoreUnavailableError(f"{self.path}: cannot use WAL (journal mode {mode})")

    def _check_existing(self) -> None:
        """Refuse a file that is not ours before changing anything in it."""
        tx = _SqliteTx(self._conn)
        names = {row[0] for row in tx.fetch(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if names and "schema_migrations" not in names:
            raise SchemaError(
                f"{self.path} is a SQLite database but not a SAIMemory store "
                f"(tables: {', '.join(sorted(names)[:5])}); it was not changed"
            )
        if names:
            current_version(tx, self.migrations, self.where)

    def _migrate(self) -> None:
        with self._write() as tx:
            upgrade(tx, self.migrations, self.where)

    def _begin(self, personas: Sequence[str] | None) -> Tx:
        """``BEGIN IMMEDIATE`` takes the database write lock, serialising every writer."""
        try:
            self._conn.execute("BEGIN" if personas is None else "BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._translate(exc) from None
        return _SqliteTx(self._conn)

    def _end(self, *, commit: bool) -> None:
        self._conn.execute("COMMIT" if commit else "ROLLBACK")

    def _matches(
        self, tx: Tx, persona: str, terms: Terms, filters: tuple[str, list[Any]], limit: int
    ) -> list[tuple[int, str]]:
        """Indexed terms through FTS5 (newest first along its rowids), short ones by
        ``LIKE`` on those candidates or, with no indexed term, on the persona's messages."""
        where, params = filters
        short = "".join("AND m.content LIKE ? ESCAPE '\\' " for _ in terms.short)
        short_params = [like_pattern(term) for term in terms.short]
        if terms.indexed:
            rows = tx.fetch(
                "SELECT m.id, m.content FROM messages_fts JOIN messages m "
                "ON m.id = messages_fts.rowid WHERE messages_fts MATCH ? AND m.persona = ? "
                f"{short}{where}ORDER BY messages_fts.rowid DESC LIMIT ?",
                [fts5_query(terms), persona, *short_params, *params, limit],
            )
        else:
            rows = tx.fetch(
                f"SELECT m.id, m.content FROM messages m WHERE m.persona = ? {short}{where}"
                "ORDER BY m.id DESC LIMIT ?",
                [persona, *short_params, *params, limit],
            )
        return [(int(row[0]), str(row[1])) for row in rows]

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()
