"""The writes of the SQL backends' store: messages (with their tags), threads, and the deletion
of a persona."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from saimemory.merge import unseen
from saimemory.pin_rows import delete_pins_and_summary
from saimemory.plan_rows import delete_plans
from saimemory.prepare import PreparedMessage, check_identifier, prepare, to_micros
from saimemory.records import ImportResult, Message, NewMessage, NewThread, Thread
from saimemory.sql_core import SqlCore
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
from saimemory.tx import Tx, main_thread_id

TAG_PAGE = 100
"""Tags of one message written by one statement (five values each: within every SQLite's
limit of 999 values a statement)."""

_ROW_COLUMNS = ("persona", "thread", "role", "content", "created_us", "pulse_id", "scope",
                "metadata", "playbook", "node", "uid")
"""The columns every backend writes of a message's row, in :meth:`SqlStore._insert_row`'s
order."""


class SqlWrites(SqlCore):
    """Messages and threads written, and a persona deleted."""

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

    _line_columns: tuple[str, ...] = ("line_role", "line_scope")
    """The columns of a message's line and scope (none in a store older than them)."""
    _extra_columns: tuple[str, ...] = ()
    """Columns of a message's row beyond the shared ones, that a backend keeps there (their
    values: :meth:`_row_extra`)."""

    @cached_property
    def _insert_sql(self) -> str:
        names = (*_ROW_COLUMNS, *self._line_columns, *self._extra_columns)
        return (f"INSERT INTO messages ({', '.join(names)}) "
                f"VALUES ({', '.join('?' * len(names))}) RETURNING id")

    def _insert_row(self, tx: Tx, row: PreparedMessage, thread: str) -> int:
        """Insert the message's row (its tags go to ``message_tags``) into ``thread``; its
        id."""
        inserted = tx.fetch(self._insert_sql, (
            row.persona, thread, row.role, row.content, row.created_us, row.pulse_id,
            row.scope, row.metadata_json, row.playbook, row.node, row.uid,
            *((row.line_role, row.line_scope) if self._line_columns else ()),
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

    def drop_volatile(self, persona: str, pulse_id: str) -> int:
        """Delete a pulse's volatile messages (see :meth:`MessageStore.drop_volatile`)."""
        which = ("FROM messages WHERE persona = ? AND pulse_id = ? AND line_scope = 'volatile'")
        with self._write(persona) as tx:
            ids = [row[0] for row in tx.fetch(f"SELECT id {which}", (persona, pulse_id))]
            if ids:
                tx.run(f"DELETE FROM message_tags WHERE message_id IN (SELECT id {which})",
                       (persona, pulse_id))
                tx.run(f"DELETE {which}", (persona, pulse_id))
        return len(ids)

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
