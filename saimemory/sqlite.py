"""The default backend: one SQLite file, WAL, a busy timeout, one transaction per write.

Writes take ``BEGIN IMMEDIATE`` (the database write lock) so writers from any number of
processes are serialised and ids grow in commit order. Full-text search uses FTS5 with
the trigram tokenizer: it matches any substring of three characters or more, which works
for Japanese (no word boundaries) as well as English, without a language-specific
tokenizer. Shorter words, which have no trigram, have an index of their own: every piece of
one or two characters of each message (:mod:`saimemory.grams`).

Opening checks the file with ``PRAGMA integrity_check`` before anything is written, so a
corrupt file is refused (:class:`~saimemory.errors.SchemaError`) exactly as it was; the check
reads the whole file and compares every index with its table (``quick_check`` does not, and
let a store whose index named the wrong rows take writes), about a second for 100,000
messages (100 MB), twice what ``quick_check`` took. A store whose file or directory is not
writable (by permissions, or because neither has a write bit: a file made read-only with
``chmod`` counts as read-only even for root) opens read-only: reads work and every write is
refused with :class:`~saimemory.errors.ReadOnlyStoreError`.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import orjson

from saimemory.any_match import COLLECTION_CAP, WORD_WINDOW
from saimemory.errors import (
    MemoryStoreError,
    ReadOnlyStoreError,
    SchemaError,
    StoreUnavailableError,
)
from saimemory.grams import keys_query, short_keys
from saimemory.locks import FilePersonaLock, NullPersonaLock, PersonaLock
from saimemory.migrations import (
    FTS_ROWID_BITS,
    SHORT_KEYS_FUNCTION,
    SQLITE_MIGRATIONS,
    current_version,
    upgrade,
)
from saimemory.prepare import PreparedMessage
from saimemory.records import Message
from saimemory.search_terms import Terms, fts5_query, like_pattern
from saimemory.sqlbase import (
    COLUMNS,
    TAGS_AT,
    Row,
    SqlStore,
    Tx,
    constraint_error,
    message_of,
)
from saimemory.stop_words import is_stop_word

BUSY_TIMEOUT_S = 30.0
PAGE_CACHE_KIB = 32 * 1024
"""The connection's page cache (SQLite's default is 2 MiB). A search reads one page of the
messages table for each of up to 2,000 matches, spread over the file by the other personas'
messages; pages the cache does not hold are read again from the operating system at each
search. The cache fills only as pages are read."""
_ID_MASK = (1 << FTS_ROWID_BITS) - 1
_IN_RANGE = (
    "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid - ? "
    "WHERE messages_fts MATCH ? AND messages_fts.rowid BETWEEN ? AND ? AND m.persona = ? "
)
"""The persona's index entries matching a query, joined to their messages (parameters:
:func:`_range_params`)."""
_NEWEST = "ORDER BY messages_fts.rowid DESC LIMIT ?"
CHECK_PROBLEMS = 100
"""The most problems the integrity check lists: it stops there (a badly damaged file
would otherwise list one per damaged row)."""
_RECOVER = "Restore it from a backup or an export, or try `sqlite3 FILE .recover`"


def _range_start(tx: Tx, persona: str) -> int | None:
    """The first rowid of the persona's range in the full-text index (None: the persona
    has no message, so no number)."""
    number = tx.fetch("SELECT n FROM persona_numbers WHERE persona = ?", (persona,))
    return int(number[0][0]) << FTS_ROWID_BITS if number else None


def _range_params(low: int, query: str, persona: str) -> list[Any]:
    """The parameters of :data:`_IN_RANGE`."""
    return [low, query, low, low | _ID_MASK, persona]


def writable(path: Path) -> bool:
    """Whether ``path`` may be written: the OS allows it and its mode has a write bit (root
    may write anything; a file or directory without any write bit is read-only for it too)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return bool(mode & 0o222) and os.access(path, os.W_OK)


class _SqliteTx:
    """A :class:`~saimemory.sqlbase.Tx` over one sqlite3 connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self._conn.execute(sql, params).fetchall()

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._conn.execute(sql, params)


FULL_STOPS_KEPT = 4096
"""The personas whose common stop words a SQLite store remembers (the latest noted)."""


def note_full_stops(
    kept: dict[str, frozenset[str]], persona: str, lists: Mapping[str, list[int]], window: int
) -> None:
    """Note in ``kept`` which of the stop words of ``lists`` filled their list for
    ``persona`` (and forget those that did not), keeping the latest
    :data:`FULL_STOPS_KEPT` personas."""
    stops = {word: len(ids) >= window for word, ids in lists.items() if is_stop_word(word)}
    if not stops:
        return
    full = (kept.pop(persona, frozenset()) | {word for word, is_full in stops.items() if is_full}
            ) - {word for word, is_full in stops.items() if not is_full}
    if full:
        kept[persona] = full  # last in the order: the latest noted
        while len(kept) > FULL_STOPS_KEPT:
            del kept[next(iter(kept))]


class SQLiteStore(SqlStore):
    """A persona message store in one SQLite file (created with its parents if missing).

    Args:
        path: The database file.
        verify: Run ``PRAGMA integrity_check`` on open (default); a host that has just
            checked the file itself may skip it.
    """

    migrations = SQLITE_MIGRATIONS
    _driver_error = sqlite3.Error
    _columns = f"{COLUMNS}, m.tags"
    _short_like = "m.content LIKE ? ESCAPE '\\'"

    def __init__(self, path: str | Path, *, verify: bool = True) -> None:
        self.path = Path(path)
        self._full_stops: dict[str, frozenset[str]] = {}
        """Each persona's stop words whose lists were full when a search last read them."""
        self.where = str(self.path)
        self._verify = verify
        if self.path.is_dir():
            raise StoreUnavailableError(f"{self.path} is a directory, not a database file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailableError(
                f"cannot create the directory {self.path.parent}: {exc.strerror}") from None
        directory = self.path.parent
        if not self.path.exists():
            if not writable(directory):
                raise StoreUnavailableError(
                    f"cannot create {self.path}: the directory {directory} is not writable "
                    "(nothing was created)")
            self.read_only = False
        else:
            self.read_only = not (writable(self.path) and writable(directory))
        try:
            self._conn = sqlite3.connect(
                self._uri(directory) if self.read_only else self.path, timeout=BUSY_TIMEOUT_S,
                isolation_level=None, check_same_thread=False, uri=self.read_only,
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailableError(f"cannot open {self.path}: {exc}") from None
        self._conn.create_function(SHORT_KEYS_FUNCTION, 1, short_keys, deterministic=True)
        self._start()

    def _uri(self, directory: Path) -> str:
        """The read-only URI of the file: ``immutable`` in a directory that cannot hold the
        WAL's shared-memory file, unless a WAL file there may hold committed writes."""
        uri = f"{self.path.absolute().as_uri()}?mode=ro"
        wal = self.path.with_name(self.path.name + "-wal")
        if not writable(directory) and not (wal.exists() and wal.stat().st_size > 0):
            uri += "&immutable=1"
        return uri

    def _setup(self) -> None:
        try:
            self._conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
            if self._verify:
                self._integrity_check()
            self._check_existing()
            if self.read_only:
                self._check_readable()
                return
            self._enable_wal()
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.Error as exc:
            raise self._translate(exc) from None

    def _integrity_check(self) -> None:
        """Refuse a corrupt file before anything is written to it: its pages, and every
        index against its table (at most :data:`CHECK_PROBLEMS` problems are listed)."""
        self._conn.text_factory = lambda data: data.decode("utf-8", "replace")
        try:
            rows = self._conn.execute(f"PRAGMA integrity_check({CHECK_PROBLEMS})").fetchall()
        except ValueError as exc:  # text SQLite reports that is not UTF-8
            raise SchemaError(
                f"{self.path} is corrupt ({exc}); it was not changed. {_RECOVER}") from None
        finally:
            self._conn.text_factory = str
        problems = [str(row[0]) for row in rows]
        if problems != ["ok"]:
            shown = "; ".join(" ".join(p.split()) for p in problems[:3])
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            if len(problems) >= CHECK_PROBLEMS:
                more = f" (and {len(problems) - 3} or more)"
            raise SchemaError(
                f"{self.path} is corrupt (SQLite integrity_check: {shown}{more}); it was not "
                f"changed. {_RECOVER}")

    def _check_readable(self) -> None:
        """A read-only file must already be a store of the current schema (nothing can be
        created or upgraded in it)."""
        tx = _SqliteTx(self._conn)
        if not tx.fetch("SELECT name FROM sqlite_master WHERE type = 'table'"):
            raise ReadOnlyStoreError(
                f"{self.path} is read-only and holds no store yet; nothing can be read from "
                "it or written to it (make it writable, or give another file)")
        version = current_version(tx, self.migrations, self.where)
        latest = self.migrations[-1].version
        if version < latest:
            raise ReadOnlyStoreError(
                f"{self.path} has schema version {version} and needs an upgrade to {latest}, "
                "but it is read-only; open it once with write access (nothing was changed)")

    def _translate(self, exc: Exception) -> MemoryStoreError:
        text = str(exc)
        if isinstance(exc, sqlite3.IntegrityError):
            return constraint_error(self.where, exc)
        if "not a database" in text or "malformed" in text:
            return SchemaError(
                f"{self.path} is not a SQLite database or is corrupt ({text}); it was not "
                f"changed. {_RECOVER}"
            )
        if "vtable constructor failed" in text or text.startswith("fts5:"):
            return SchemaError(
                f"{self.path}: a search index is damaged ({text}); the messages may be "
                "intact: export them (`sea memory export`) and import them into a new store, "
                "or rebuild the trigram index with `sqlite3 FILE \"INSERT INTO "
                "messages_fts(messages_fts) VALUES('rebuild')\"` (the index of short words, "
                "messages_short, needs SAIMemory's key function: export and import)")
        if "Could not decode to UTF-8" in text:
            return SchemaError(
                f"{self.path} holds text that is not UTF-8 ({text}); the file is probably "
                f"corrupt. {_RECOVER}")
        if "readonly database" in text:
            return ReadOnlyStoreError(f"{self.path} cannot be written ({text}); nothing was "
                                      "written")
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
        """``BEGIN IMMEDIATE`` takes the database write lock, serialising every writer.

        Raises:
            ReadOnlyStoreError: a write to a store opened read-only.
        """
        if personas is not None and self.read_only:
            raise ReadOnlyStoreError(
                f"{self.path} is read-only (the file or its directory is not writable); "
                "nothing was written")
        try:
            self._conn.execute("BEGIN" if personas is None else "BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._translate(exc) from None
        return _SqliteTx(self._conn)

    def _end(self, *, commit: bool) -> None:
        if not commit and not self._conn.in_transaction:
            # SQLite already rolled back after the error (a corrupt index does that); a
            # ROLLBACK now would fail and hide the error that matters.
            return
        self._conn.execute("COMMIT" if commit else "ROLLBACK")

    _extra_columns = ("tags",)

    def _row_extra(self, row: PreparedMessage) -> tuple[Any, ...]:
        """The row holds the message's tags too, as a JSON array (migration 10)."""
        return (orjson.dumps(row.tags).decode(),)

    def _messages(self, tx: Tx, rows: list[Row]) -> list[Message]:
        """The messages of rows of :attr:`_columns`: each row holds its tags (migration
        10), so no other table is read."""
        return [message_of(row, orjson.loads(row[TAGS_AT])) for row in rows]

    def _matches(
        self, tx: Tx, persona: str, terms: Terms, filters: tuple[str, list[Any]], limit: int
    ) -> list[tuple[int, str]]:
        """Indexed terms through FTS5 (newest first along the persona's range of its
        rowids, see :data:`~saimemory.migrations.FTS_ROWID_BITS`), short ones by ``LIKE``
        on those candidates."""
        where, params = filters
        short = "".join(f"AND {self._short_like} " for _ in terms.short)
        short_params = [like_pattern(term) for term in terms.short]
        low = _range_start(tx, persona)
        if low is None:
            return []  # the persona has no message
        rows = tx.fetch(
            f"SELECT m.id, m.content {_IN_RANGE}{short}{where}{_NEWEST}",
            [*_range_params(low, fts5_query(terms), persona), *short_params, *params, limit],
        )
        # an INTEGER PRIMARY KEY and a TEXT column: sqlite3 gives int and str already
        return cast("list[tuple[int, str]]", rows)

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
        """The FTS5 index of short words (:mod:`saimemory.grams`) along the persona's
        range of rowids, up to ``upto``."""
        low = _range_start(tx, persona)
        if low is None:
            return []  # the persona has no message
        sql, params = conditions
        return tx.fetch(
            "SELECT m.id, m.content FROM messages_short JOIN messages m"
            " ON m.id = messages_short.rowid - ? WHERE messages_short MATCH ?"
            " AND messages_short.rowid BETWEEN ? AND ? AND m.persona = ?"
            f" {sql}ORDER BY messages_short.rowid DESC LIMIT ?",
            [low, keys_query(words, any_word=any_word), low, low | upto, persona, *params,
             limit],
        )

    def _walk_floor(self, tx: Tx, persona: str) -> int:
        """Below the newest :attr:`_short_walk` messages, and below every message the index
        of short words does not hold yet (migration 12 writes it every
        :data:`~saimemory.migrations.SHORT_INDEX_LAG` messages of a persona, fewer than
        the walk: the newest messages are read by ``LIKE`` anyway)."""
        floor = tx.fetch(
            "SELECT min(coalesce((SELECT m.id FROM messages m WHERE m.persona = ?"
            " ORDER BY m.id DESC LIMIT 1 OFFSET ?), 0), coalesce((SELECT short_through"
            " FROM persona_counts WHERE persona = ?), 0))",
            (persona, self._short_walk, persona),
        )
        return int(floor[0][0])

    def _match_ids(
        self, tx: Tx, persona: str, word: str, filters: tuple[str, list[Any]], limit: int
    ) -> list[int]:
        """FTS5 alone (its rowids, in the persona's range) when no filter needs the
        message's columns; else joined to the messages as :meth:`_matches`."""
        where, params = filters
        low = _range_start(tx, persona)
        if low is None:
            return []  # the persona has no message
        query = fts5_query(Terms((word,), ()))
        if where:
            sql = f"SELECT m.id AS id {_IN_RANGE}{where}{_NEWEST}"
            values = [*_range_params(low, query, persona), *params, limit]
        else:
            sql = ("SELECT rowid - ? AS id FROM messages_fts WHERE messages_fts MATCH ? "
                   "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?")
            values = [low, query, low, low | _ID_MASK, limit]
        # one row, the ids as a JSON array: a row each cost more in Python than the index
        # took to find them
        found: list[int] = orjson.loads(
            tx.fetch(f"SELECT json_group_array(id) FROM ({sql})", values)[0][0])
        found.sort(reverse=True)  # newest first, whatever order the aggregate kept
        return found

    def _word_lists(
        self,
        tx: Tx,
        persona: str,
        words: Sequence[str],
        filters: tuple[str, list[Any]],
        window: int,
    ) -> dict[str, list[int]]:
        """As :meth:`SqlStore._word_lists`; notes which of the persona's stop words filled
        their lists (:meth:`_costly_words`)."""
        lists = super()._word_lists(tx, persona, words, filters, window)
        if not filters[0] and window == WORD_WINDOW:
            note_full_stops(self._full_stops, persona, lists, window)
        return lists

    def _costly_words(
        self, tx: Tx, persona: str, words: Sequence[str], filters: tuple[str, list[Any]],
        limit: int,
    ) -> frozenset[str]:
        """The stop words whose lists were full the last time a search of the persona read
        them without filters: common words, whose lists cost the most (SQLite has no
        statistics of the texts to tell them)."""
        if filters[0]:
            return frozenset()
        return self._full_stops.get(persona, frozenset()).intersection(words)

    def _collection(self, tx: Tx, persona: str) -> int:
        """The persona's count of messages that migration 9's triggers keep, up to
        :data:`~saimemory.any_match.COLLECTION_CAP`: one row read, not the persona's part
        of an index."""
        found = tx.fetch("SELECT messages FROM persona_counts WHERE persona = ?", (persona,))
        return min(int(found[0][0]), COLLECTION_CAP) if found else 0

    def optimize(self) -> None:
        """Each full-text index's segments merged into one (FTS5 ``optimize``: a search
        reads one b-tree per word instead of one per segment, and appends leave many small
        segments). No ``ANALYZE``: the store's queries are planned, and tested, without
        statistics, and statistics could change those plans."""
        with self._write() as tx:
            tx.run("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')")
            tx.run("INSERT INTO messages_short (messages_short) VALUES ('optimize')")

    @property
    def connection_lock(self) -> threading.RLock:
        """The lock this store's connection is used under (every read and write holds it).

        Another connection of this process to the same file (``sea serve``'s own tables)
        that takes it too never waits on SQLite's busy handler, which sleeps 1 to 100 ms a
        try when two connections write at once."""
        lock: threading.RLock = self._lock
        return lock

    def persona_lock(self, persona: str) -> PersonaLock:
        """A file lock on ``persona`` in ``<file>.locks/`` beside the store, which every
        process opening this file respects; always free on a read-only store (its pulses
        cannot write)."""
        if self.read_only:
            return NullPersonaLock()
        return FilePersonaLock(self.path.with_name(self.path.name + ".locks"), persona)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()
