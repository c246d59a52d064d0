"""The core of the SQL backends' store (:class:`SqlCore`): transactions, the write lock and
what a message's row is.

SQL here uses ``?`` placeholders; a backend's :class:`Tx` translates them if its driver
wants another style. Backends provide transactions, the per-persona write lock, the
search query and error translation; the queries of the store contract are written once on
top of this core (:mod:`saimemory.sql_writes`, :mod:`saimemory.sql_records`,
:mod:`saimemory.sql_reads`, :mod:`saimemory.sql_search`), so both backends behave the same.
"""

from __future__ import annotations

import operator
import threading
from abc import abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime

import orjson

from saimemory.base import MessageStore
from saimemory.errors import MemoryStoreError
from saimemory.migrations import Migration, current_version
from saimemory.prepare import from_micros, provenance
from saimemory.records import COMMITTED, CONVERSATION_TAG, MAIN_LINE, Message
from saimemory.tx import Row, Tx

COLUMNS = (
    "m.id, m.persona, m.thread, m.role, m.content, m.created_us, m.pulse_id, m.scope, "
    "m.metadata, m.playbook, m.node, m.uid, m.line_role, m.line_scope"
)
"""The message columns every read selects, in the order :func:`message_of` reads them."""


MAIN_COMMITTED = f"m.line_role = '{MAIN_LINE}' AND m.line_scope = '{COMMITTED}'"
"""Whether message ``m`` is of the main line and committed: the only conversation of other
pulses a history reads (a pulse reads all of its own)."""


def message_of(row: Row, tags: Sequence[str]) -> Message:
    """The stored message of a row of :data:`COLUMNS`, with its own ``tags`` in order and
    then those of its pulse, playbook and node (:func:`~saimemory.prepare.provenance`)."""
    return Message(  # positionally (keywords cost a dict a call), in the fields' order
        row[0], row[1], row[2], row[3], row[4], from_micros(row[5]), row[6], row[7],
        (*tags, *provenance(row[6], row[9], row[10])), orjson.loads(row[8]), row[11], row[9],
        row[10], row[12], row[13],
    )


TAGS_AT = 14
"""Where a backend's row of :data:`COLUMNS` followed by its own tags holds those tags."""


def limit_literal(limit: int) -> str:
    """A page's size written into a statement rather than bound: PostgreSQL's generic plan
    of a prepared statement then knows it (with a parameter it assumes a tenth of the rows),
    so its cost matches the plans made with the values and the server keeps it, where it
    would otherwise plan every execution again. ``operator.index`` admits integers only."""
    return str(operator.index(limit))


class SqlCore(MessageStore):
    """The store contract over a SQL database with the schema of the migrations: its
    transactions and what every query shares."""


    migrations: tuple[Migration, ...]
    """The backend's migrations, applied on open."""
    where: str
    """The store as error messages name it (a file path, a PostgreSQL schema)."""
    read_only: bool = False
    """The store serves reads only; every write raises
    :class:`~saimemory.errors.ReadOnlyStoreError` (a SQLite file that is not writable)."""

    _lock: threading.RLock
    """Serialises the calls of threads sharing this store object (one connection)."""
    _driver_error: type[Exception]
    """The base class of the driver's errors, which :meth:`_translate` turns into ours."""
    _columns = COLUMNS
    """The message columns every read selects: :data:`COLUMNS`, and whatever more the
    backend's :meth:`_messages` reads."""
    _conversation = (
        "message_tags t JOIN messages m ON m.id = t.message_id WHERE t.persona = ?"
        # the tag written out: SQLite's index of it (migration 11) serves only a query
        # that names it
        f" AND t.tag = '{CONVERSATION_TAG}' AND t.thread = ? AND {MAIN_COMMITTED}",
        "t.message_id",
    )
    """Where a thread's conversation is read (``FROM …`` a persona and a thread, ``?``) and
    the column ordering it by message id."""
    _main_line = f"m.line_role = '{MAIN_LINE}'"
    """Whether message ``m`` is of the main line (a store older than the lines: every one)."""
    _short_like: str
    """The condition that message ``m`` holds one short word (its ``LIKE`` pattern the one
    parameter), case-insensitively and never through the trigram index: a word of one or
    two characters has no trigram, and an index asked for it would read all of itself."""

    @abstractmethod
    def _setup(self) -> None:
        """Check the database is a store this code can open, then apply the migrations."""

    def _start(self) -> None:
        """Set up a freshly opened connection; close it again when that fails."""
        self._lock = threading.RLock()
        try:
            self._setup()
        except BaseException:
            self.close()
            raise

    @abstractmethod
    def _begin(self, personas: Sequence[str] | None) -> Tx:
        """Start a write transaction holding the write lock of each persona (in the order
        given), or a read transaction when ``personas`` is None."""

    @abstractmethod
    def _end(self, *, commit: bool) -> None:
        """Commit, or roll back, the transaction :meth:`_begin` started."""

    @abstractmethod
    def _translate(self, exc: Exception) -> MemoryStoreError:
        """Our error for a driver error."""

    @contextmanager
    def _transaction(
        self, personas: Sequence[str] | None, begin: Callable[[], Tx] | None = None
    ) -> Iterator[Tx]:
        """A transaction :meth:`_begin` starts (or ``begin``, a backend's own start of one)."""
        with self._lock:
            tx = self._begin(personas) if begin is None else begin()
            try:
                yield tx
                self._end(commit=True)
            except self._driver_error as exc:
                self._roll_back(exc)
                raise self._translate(exc) from None
            except BaseException as exc:
                self._roll_back(exc)
                raise

    def _roll_back(self, cause: BaseException) -> None:
        """Roll back after ``cause``. A rollback that fails too must not replace ``cause``
        (the error that says what went wrong); its own error is added to it as a note."""
        try:
            self._end(commit=False)
        except self._driver_error as exc:
            cause.add_note(f"(rolling back failed too: {exc})")

    def _write(self, *personas: str) -> AbstractContextManager[Tx]:
        """A write transaction holding the write lock of each persona (in the order given)."""
        return self._transaction(personas)

    def _read(self) -> AbstractContextManager[Tx]:
        """A read transaction."""
        return self._transaction(None)

    def _read_one(self) -> AbstractContextManager[Tx]:
        """A read of exactly one statement, which is a snapshot by itself. Here a read
        transaction (in process, beginning one costs nothing); a backend with round trips
        runs the statement alone, without ``BEGIN`` and ``COMMIT``."""
        return self._read()

    def _search_read(self, persona: str) -> AbstractContextManager[Tx]:
        """The read transaction of a search of ``persona``'s messages (a backend may start
        it with what every search of the persona reads)."""
        return self._read()

    def _now(self) -> datetime:
        return datetime.now(UTC)

    def schema_version(self) -> int:
        """The schema version of the store."""
        with self._read() as tx:
            return current_version(tx, self.migrations, self.where)

    @abstractmethod
    def _messages(self, tx: Tx, rows: list[Row]) -> list[Message]:
        """The messages of rows of :attr:`_columns`, with their tags: each backend keeps a
        message's own tags in its row too (SQLite's migration 10, PostgreSQL's 14), so no
        other table is read."""

