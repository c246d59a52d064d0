"""The reads of messages of the SQL backends' store: the pulse rule (:meth:`SqlReads.history`),
a thread's conversation, a pulse's messages, the newest ones and every one in order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from saimemory.base import DEFAULT_BUDGET
from saimemory.budget import clamp, spend
from saimemory.errors import InvalidQueryError
from saimemory.records import CONVERSATION_TAG, ROOT_SCOPE, HistoryBudget, Message
from saimemory.sql_core import SqlCore, limit_literal
from saimemory.tx import Row, Tx, main_thread_id

PAGE = 500
"""Messages one read of :meth:`SqlReads.iter_messages` reads at a time."""

HISTORY_PAGE = 64
"""Conversation messages the pulse rule reads a page at a time."""


class SqlReads(SqlCore):
    """The reads of messages (the pulse rule among them)."""

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
        """This pulse's rows of ``scope`` and its main line's conversation rows of any scope
        (a sub line's are its own)."""
        if pulse_id is None:
            return []
        return tx.fetch(
            f"SELECT {self._columns} FROM messages m "
            "WHERE m.persona = ? AND m.pulse_id = ? AND m.thread = ? AND (m.scope = ? OR "
            f"({self._main_line} AND EXISTS "
            "(SELECT 1 FROM message_tags t WHERE t.message_id = m.id AND t.tag = ?))) "
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
