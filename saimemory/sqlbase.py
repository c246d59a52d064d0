"""What the SQLite and PostgreSQL backends share: the queries of the store contract.

SQL here uses ``?`` placeholders; a backend's :class:`Tx` translates them if its driver
wants another style. Backends provide transactions, the per-persona write lock, the
search query and error translation; everything else (the pulse rule, threads, export
order) is written once here so both backends behave the same.
"""

from __future__ import annotations

import operator
import threading
import uuid
from abc import abstractmethod
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, cast

import orjson

from saimemory.all_match import rank_all, relevance
from saimemory.any_match import COLLECTION_CAP, WORD_WINDOW, rank_any
from saimemory.base import DEFAULT_BUDGET, MessageStore
from saimemory.budget import clamp, spend
from saimemory.call_rows import check_call, insert_calls, read_calls
from saimemory.calls import CallRecord
from saimemory.errors import (
    InvalidMessageError,
    InvalidQueryError,
    MemoryStoreError,
    NotFoundError,
)
from saimemory.merge import unseen
from saimemory.migrations import Migration, current_version
from saimemory.pin_rows import (
    delete_pin,
    delete_pins_and_summary,
    insert_pin,
    read_pins,
    read_short_term,
    write_short_term,
)
from saimemory.pins import Pin, ShortTermMemory
from saimemory.plan_rows import (
    check_plan,
    check_plan_identifier,
    clear_current,
    delete_plans,
    list_plans,
    read_current_plan,
    read_plan,
    set_current,
    write_plan,
)
from saimemory.plans import Plan, PlanStatus
from saimemory.prepare import (
    PreparedMessage,
    check_identifier,
    from_micros,
    prepare,
    provenance,
    to_micros,
)
from saimemory.records import (
    CONVERSATION_TAG,
    ROOT_SCOPE,
    HistoryBudget,
    ImportResult,
    Message,
    NewMessage,
    NewThread,
    SearchHit,
    Thread,
)
from saimemory.search_terms import (
    RANK_WINDOW,
    MatchMode,
    Terms,
    like_pattern,
    search_filters,
    snippet,
    split_terms,
)
from saimemory.threads import (
    THREAD_COLUMNS,
    THREAD_FROM,
    close_sub_thread,
    ensure_main,
    ensure_threads,
    get_thread,
    insert_sub_thread,
    open_sub_thread,
    to_thread,
    writable_thread,
)
from saimemory.tx import Row, Tx, main_thread_id

_ROW_COLUMNS = ("persona", "thread", "role", "content", "created_us", "pulse_id", "scope",
                "metadata", "playbook", "node", "uid")
"""The columns every backend writes of a message's row, in :meth:`SqlStore._insert_row`'s
order."""

COLUMNS = (
    "m.id, m.persona, m.thread, m.role, m.content, m.created_us, m.pulse_id, m.scope, "
    "m.metadata, m.playbook, m.node, m.uid"
)
"""The message columns every read selects, in the order :func:`message_of` reads them."""


def message_of(row: Row, tags: Sequence[str]) -> Message:
    """The stored message of a row of :data:`COLUMNS`, with its own ``tags`` in order and
    then those of its pulse, playbook and node (:func:`~saimemory.prepare.provenance`)."""
    return Message(  # positionally (keywords cost a dict a call), in the fields' order
        row[0], row[1], row[2], row[3], row[4], from_micros(row[5]), row[6], row[7],
        (*tags, *provenance(row[6], row[9], row[10])), orjson.loads(row[8]), row[11], row[9],
        row[10],
    )


PAGE = 500
HISTORY_PAGE = 64
CONTENT_CHUNK = 500
"""Messages whose text one query reads by id."""


def limit_literal(limit: int) -> str:
    """A page's size written into a statement rather than bound: PostgreSQL's generic plan
    of a prepared statement then knows it (with a parameter it assumes a tenth of the rows),
    so its cost matches the plans made with the values and the server keeps it, where it
    would otherwise plan every execution again. ``operator.index`` admits integers only."""
    return str(operator.index(limit))


TAG_PAGE = 100
"""Tags of one message written by one statement (five values each: within every SQLite's
limit of 999 values a statement)."""


class SqlStore(MessageStore):
    """The store contract over a SQL database with the schema of the migrations."""

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
        f" AND t.tag = '{CONVERSATION_TAG}' AND t.thread = ?",
        "t.message_id",
    )
    """Where a thread's conversation is read (``FROM …`` a persona and a thread, ``?``) and
    the column ordering it by message id."""
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

    def _now(self) -> datetime:
        return datetime.now(UTC)

    def schema_version(self) -> int:
        """The schema version of the store."""
        with self._read() as tx:
            return current_version(tx, self.migrations, self.where)

    # -- writes ---------------------------------------------------------------------------

    def append(self, message: NewMessage) -> Message:
        """Store one message in its own transaction and return it with its id and time."""
        row = prepare(message, self._now())
        with self._write(row.persona) as tx:
            return self._insert(tx, row)

    def append_many(self, messages: Sequence[NewMessage]) -> list[Message]:
        """Store several messages in one transaction: all of them, in order, or none."""
        now = self._now()
        rows = [prepare(message, now) for message in messages]
        if not rows:
            return []
        personas = sorted({row.persona for row in rows})
        with self._write(*personas) as tx:
            return [self._insert(tx, row) for row in rows]

    def import_messages(
        self, messages: Sequence[NewMessage], threads: Sequence[NewThread] = ()
    ) -> ImportResult:
        """Append, in one transaction, the messages whose uid their persona does not have yet,
        creating the described threads they need (see :meth:`MessageStore.import_messages`)."""
        now = self._now()
        rows = [prepare(message, now) for message in messages]
        personas = sorted({row.persona for row in rows})
        if not personas:
            return ImportResult(written=[], skipped=0)
        with self._write(*personas) as tx:
            fresh, skipped = unseen(tx, rows)
            needed = {row.thread for row in fresh if row.thread is not None}
            ensure_threads(tx, threads, needed, to_micros(now))
            return ImportResult(written=[self._insert(tx, row) for row in fresh], skipped=skipped)

    def _insert(self, tx: Tx, row: PreparedMessage) -> Message:
        thread = writable_thread(tx, row.persona, row.thread, to_micros(self._now()))
        message_id = self._insert_row(tx, row, thread)
        tags = list(enumerate(row.tags))
        for start in range(0, len(tags), TAG_PAGE):  # a statement a page: a round trip each
            page = tags[start:start + TAG_PAGE]
            tx.run(
                "INSERT INTO message_tags (message_id, pos, tag, persona, thread) VALUES "
                + ", ".join("(?, ?, ?, ?, ?)" for _ in page),
                [value for pos, tag in page
                 for value in (message_id, pos, tag, row.persona, thread)],
            )
        return row.to_message(message_id, thread)

    _extra_columns: tuple[str, ...] = ()
    """Columns of a message's row beyond the shared ones, that a backend keeps there (their
    values: :meth:`_row_extra`)."""

    @cached_property
    def _insert_sql(self) -> str:
        names = (*_ROW_COLUMNS, *self._extra_columns)
        return (f"INSERT INTO messages ({', '.join(names)}) "
                f"VALUES ({', '.join('?' * len(names))}) RETURNING id")

    def _insert_row(self, tx: Tx, row: PreparedMessage, thread: str) -> int:
        """Insert the message's row (its tags go to ``message_tags``) into ``thread``; its
        id."""
        inserted = tx.fetch(self._insert_sql, (
            row.persona, thread, row.role, row.content, row.created_us, row.pulse_id,
            row.scope, row.metadata_json, row.playbook, row.node, row.uid,
            *self._row_extra(row),
        ))
        return int(inserted[0][0])

    def _row_extra(self, row: PreparedMessage) -> tuple[Any, ...]:
        """The values of :attr:`_extra_columns` for ``row``."""
        return ()

    def main_thread(self, persona: str) -> Thread:
        """The persona's main thread (created on first use)."""
        check_identifier(persona, "persona")
        with self._read_one() as tx:
            found = get_thread(tx, main_thread_id(persona))
        if found is not None:
            return found
        with self._write(persona) as tx:
            return ensure_main(tx, persona, to_micros(self._now()))

    def create_thread(self, persona: str, *, title: str, parent: str | None = None) -> Thread:
        """A new sub-thread (``parent`` defaults to the main thread)."""
        check_identifier(persona, "persona")
        check_identifier(title, "title")
        thread = NewThread(f"{persona}:{uuid.uuid4().hex[:16]}", persona, title, parent)
        with self._write(persona) as tx:
            return insert_sub_thread(tx, thread, to_micros(self._now()))

    def threads(self, persona: str) -> list[Thread]:
        """All threads of a persona, the main thread first, then by creation."""
        with self._read_one() as tx:
            rows = tx.fetch(
                f"SELECT {THREAD_COLUMNS} FROM {THREAD_FROM} WHERE t.persona = ? "
                "ORDER BY t.is_main DESC, t.created_us, t.id",
                (persona,),
            )
        return [to_thread(row) for row in rows]

    def open_thread(
        self, persona: str, thread_id: str, *, title: str, parent: str | None = None
    ) -> Thread:
        """Open the sub-thread ``thread_id`` (see :meth:`MessageStore.open_thread`)."""
        check_identifier(persona, "persona")
        check_identifier(thread_id, "thread id")
        check_identifier(title, "title")
        thread = NewThread(thread_id, persona, title, parent)
        with self._write(persona) as tx:
            return open_sub_thread(tx, thread, to_micros(self._now()))

    def close_thread(
        self, persona: str, thread_id: str, *, chronicle: str | None = None
    ) -> Thread:
        """Close a sub-thread (see :meth:`MessageStore.close_thread`)."""
        with self._write(persona) as tx:
            return close_sub_thread(tx, persona, thread_id, chronicle, to_micros(self._now()))

    def delete_persona(self, persona: str) -> int:
        """Delete every message and thread of a persona; the number of messages deleted."""
        with self._write(persona) as tx:
            count = int(tx.fetch("SELECT COUNT(*) FROM messages WHERE persona = ?",
                                 (persona,))[0][0])
            tx.run("DELETE FROM message_tags WHERE message_id IN "
                   "(SELECT id FROM messages WHERE persona = ?)", (persona,))
            tx.run("DELETE FROM messages WHERE persona = ?", (persona,))
            tx.run("DELETE FROM thread_states WHERE persona = ?", (persona,))
            tx.run("DELETE FROM threads WHERE persona = ? AND is_main = 0", (persona,))
            tx.run("DELETE FROM threads WHERE persona = ?", (persona,))
            delete_plans(tx, persona)
            delete_pins_and_summary(tx, persona)
            tx.run("DELETE FROM call_records WHERE persona = ?", (persona,))
        return count

    # -- pinned items, short-term memory, call records -------------------------------------

    def pins(self, persona: str) -> list[Pin]:
        """The persona's pinned items, oldest first."""
        with self._read_one() as tx:
            return read_pins(tx, persona)

    def pin(self, persona: str, text: str) -> Pin:
        """Pin ``text`` for the persona (see :meth:`MessageStore.pin`)."""
        check_identifier(persona, "persona")
        with self._write(persona) as tx:
            return insert_pin(tx, persona, text, to_micros(self._now()))

    def unpin(self, persona: str, pin_id: int) -> bool:
        """Remove one of the persona's pins; False when it has none of that id."""
        check_identifier(persona, "persona")
        with self._write(persona) as tx:
            return delete_pin(tx, persona, int(pin_id))

    def short_term(self, persona: str) -> ShortTermMemory | None:
        """The persona's short-term memory, if any."""
        with self._read_one() as tx:
            return read_short_term(tx, persona)

    def save_short_term(self, persona: str, text: str, through_id: int) -> ShortTermMemory:
        """Replace the persona's short-term memory."""
        check_identifier(persona, "persona")
        with self._write(persona) as tx:
            return write_short_term(tx, persona, text, through_id, to_micros(self._now()))

    def conversation_before(
        self,
        persona: str,
        *,
        before: int | None,
        after: int = 0,
        limit: int = 50,
        exclude_pulse: str | None = None,
    ) -> list[Message]:
        """Conversation of the main thread between two ids, newest ``limit``, oldest first."""
        if type(limit) is not int or limit < 0:
            raise InvalidQueryError(f"limit must be a whole number >= 0, got {limit!r}")
        with self._read_one() as tx:
            rows = self._conversation_page(
                tx, persona, main_thread_id(persona), exclude_pulse, before, limit, after=after
            )
            rows.reverse()
            return self._messages(tx, rows)

    def record_calls(self, records: Sequence[CallRecord]) -> None:
        """Store call records in one transaction (all or none)."""
        for record in records:
            check_call(record)
        personas = sorted({record.persona for record in records})
        if personas:
            self._write_calls(records, personas)

    def _write_calls(self, records: Sequence[CallRecord], personas: list[str]) -> None:
        """Write checked records in one transaction holding each of ``personas``' locks."""
        with self._write(*personas) as tx:
            insert_calls(tx, records, to_micros(self._now()))

    def call_records(
        self,
        persona: str | None = None,
        *,
        since: datetime | None = None,
        pulse_id: str | None = None,
    ) -> list[CallRecord]:
        """Stored call records, oldest first (see :meth:`MessageStore.call_records`)."""
        with self._read_one() as tx:
            return read_calls(tx, persona, since, pulse_id)

    # -- plans ----------------------------------------------------------------------------

    def save_plan(self, plan: Plan, *, make_current: bool = False) -> Plan:
        """Insert or update a plan (see :meth:`MessageStore.save_plan`)."""
        check_plan(plan)
        now = to_micros(self._now())
        with self._write(plan.persona) as tx:
            saved = write_plan(tx, plan, now, self.where)
            if make_current:
                set_current(tx, plan.persona, plan.id, now, self.where)
        return saved

    def get_plan(self, persona: str, plan_id: str) -> Plan:
        """The persona's plan with this id (:class:`NotFoundError` if none)."""
        check_plan_identifier(persona, "persona")
        with self._read_one() as tx:
            found = read_plan(tx, persona, plan_id)
        if found is None:
            raise NotFoundError(f"{self.where}: persona {persona!r} has no plan {plan_id!r}")
        return found

    def list_plans(
        self, persona: str, *, status: PlanStatus | Sequence[PlanStatus] | None = None
    ) -> list[Plan]:
        """The persona's plans, newest first (of ``status``, when given)."""
        check_plan_identifier(persona, "persona")
        statuses = (status,) if isinstance(status, str) else status
        with self._read_one() as tx:
            return list_plans(tx, persona, statuses)

    def current_plan(self, persona: str) -> Plan | None:
        """The persona's current plan, if one is set."""
        check_plan_identifier(persona, "persona")
        with self._read_one() as tx:
            return read_current_plan(tx, persona)

    def set_current_plan(self, persona: str, plan_id: str) -> None:
        """Make one of the persona's plans its current plan."""
        check_plan_identifier(persona, "persona")
        with self._write(persona) as tx:
            set_current(tx, persona, plan_id, to_micros(self._now()), self.where)

    def clear_current_plan(self, persona: str) -> str | None:
        """Unset the persona's current plan; the id it had, if any."""
        check_plan_identifier(persona, "persona")
        with self._write(persona) as tx:
            return clear_current(tx, persona)

    # -- reads ----------------------------------------------------------------------------

    @abstractmethod
    def _messages(self, tx: Tx, rows: list[Row]) -> list[Message]:
        """The messages of rows of :attr:`_columns`, with their tags: each backend keeps a
        message's own tags in its row too (SQLite's migration 10, PostgreSQL's 14), so no
        other table is read."""

    def history(
        self,
        persona: str,
        *,
        pulse_id: str | None = None,
        scope: str = ROOT_SCOPE,
        budget: HistoryBudget = DEFAULT_BUDGET,
        thread: str | None = None,
    ) -> list[Message]:
        """The pulse rule (see :meth:`MessageStore.history`)."""
        thread_id = thread if thread is not None else main_thread_id(persona)
        with self._read() as tx:
            if budget.max_messages <= HISTORY_PAGE:  # one page: its tags and the pulse's at once
                page = self._conversation_page(
                    tx, persona, thread_id, pulse_id, None, budget.max_messages
                ) if budget.max_messages else []
                current = self._current_pulse(tx, persona, thread_id, pulse_id, scope)
                both = self._messages(tx, page + current)
                return spend(both[:len(page)], budget) + clamp(both[len(page):], budget)
            earlier = spend(
                self._earlier_conversation(tx, persona, thread_id, pulse_id, budget), budget
            )
            current = self._current_pulse(tx, persona, thread_id, pulse_id, scope)
            return earlier + clamp(self._messages(tx, current), budget)

    def _earlier_conversation(
        self, tx: Tx, persona: str, thread: str, pulse_id: str | None, budget: HistoryBudget
    ) -> Iterator[Message]:
        """Conversation of other pulses, newest first, read a page at a time while wanted."""
        before, remaining = None, budget.max_messages
        while remaining > 0:
            page = min(remaining, HISTORY_PAGE)
            rows = self._conversation_page(tx, persona, thread, pulse_id, before, page)
            yield from self._messages(tx, rows)
            if len(rows) < page:
                return
            before, remaining = rows[-1][0], remaining - len(rows)

    def _conversation_page(
        self, tx: Tx, persona: str, thread: str, pulse_id: str | None, before: int | None,
        limit: int, *, after: int | None = None,
    ) -> list[Row]:
        """The newest ``limit`` conversation rows of the thread older than ``before`` and
        newer than ``after`` (each if given) and not of ``pulse_id`` (if given), newest
        first."""
        source, key = self._conversation
        params: list[Any] = [persona, thread]
        bounds = ""
        if pulse_id is not None:
            bounds += "AND (m.pulse_id IS NULL OR m.pulse_id <> ?) "
            params.append(pulse_id)
        if before is not None:
            bounds += f"AND {key} < ? "
            params.append(before)
        if after is not None:
            bounds += f"AND {key} > ? "
            params.append(after)
        return tx.fetch(
            f"SELECT {self._columns} FROM {source} {bounds}"
            f"ORDER BY {key} DESC LIMIT {limit_literal(limit)}",
            params,
        )

    def _current_pulse(
        self, tx: Tx, persona: str, thread: str, pulse_id: str | None, scope: str
    ) -> list[Row]:
        """This pulse's rows of ``scope`` and its conversation rows of any scope."""
        if pulse_id is None:
            return []
        return tx.fetch(
            f"SELECT {self._columns} FROM messages m "
            "WHERE m.persona = ? AND m.pulse_id = ? AND m.thread = ? AND (m.scope = ? OR EXISTS "
            "(SELECT 1 FROM message_tags t WHERE t.message_id = m.id AND t.tag = ?)) "
            "ORDER BY m.id",
            (persona, pulse_id, thread, scope, CONVERSATION_TAG),
        )

    def pulse_messages(self, persona: str, pulse_id: str) -> list[Message]:
        """Every message written by one pulse, in write order, all scopes and threads."""
        with self._read_one() as tx:
            rows = tx.fetch(
                f"SELECT {self._columns} FROM messages m WHERE m.persona = ? AND m.pulse_id = ? "
                "ORDER BY m.id",
                (persona, pulse_id),
            )
            return self._messages(tx, rows)

    def recent(self, persona: str, *, limit: int = 20, thread: str | None = None) -> list[Message]:
        """The newest ``limit`` messages of a persona (all threads unless one is named)."""
        if limit < 0:
            raise InvalidQueryError(f"limit must be >= 0, got {limit}")
        where, params = "m.persona = ?", [persona]
        if thread is not None:
            where, params = "m.persona = ? AND m.thread = ?", [persona, thread]
        with self._read() as tx:
            rows = tx.fetch(
                f"SELECT {self._columns} FROM messages m WHERE {where} ORDER BY m.id DESC LIMIT ?",
                [*params, limit],
            )
            rows.reverse()
            return self._messages(tx, rows)

    def iter_messages(self, persona: str) -> Iterator[Message]:
        """Every message of a persona in write order, read page by page."""
        last = 0
        while True:
            with self._read_one() as tx:  # each page a snapshot of its own, as before
                rows = tx.fetch(
                    f"SELECT {self._columns} FROM messages m WHERE m.persona = ? AND m.id > ? "
                    "ORDER BY m.id LIMIT ?",
                    (persona, last, PAGE),
                )
                page = self._messages(tx, rows)
            yield from page
            if len(rows) < PAGE:
                return
            last = page[-1].id

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


def constraint_error(where: str, exc: Exception) -> InvalidMessageError:
    """A write the database refused for a constraint (the transaction wrote nothing)."""
    if "uid" in str(exc):
        return InvalidMessageError(
            f"{where}: the persona already has a message with this uid; nothing written ({exc})"
        )
    return InvalidMessageError(f"{where}: constraint violated, nothing written: {exc}")


__all__ = ["COLUMNS", "Row", "SqlStore", "Tx", "constraint_error", "main_thread_id"]
