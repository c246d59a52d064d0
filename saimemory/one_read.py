"""History and recent messages read by one statement, each message's tags in its row.

A single statement reads one snapshot, so these reads need no explicit transaction: on
PostgreSQL the whole read is one round trip instead of a ``BEGIN``, the messages, their
tags, the current pulse, its tags and a ``COMMIT``. (SQLite, in process, has no round trip
to save, so it keeps the reads of :class:`~saimemory.sqlbase.SqlStore`.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from saimemory import sqlbase
from saimemory.budget import clamp, spend
from saimemory.migrations import CONVERSATION_ROW
from saimemory.records import MAIN_LINE, HistoryBudget, Message
from saimemory.tx import Row

COLUMNS = sqlbase.COLUMNS.replace("m.", "o.")
"""The message columns of the outer query (the inner ones select ``m.*`` as ``o``)."""

TAGS = "o.tags"
"""The own tags of message ``o``, in order, as one array (NULL for none): PostgreSQL keeps
them in the row (migration 14)."""

Fetch = Callable[[str, Sequence[Any]], list[Row]]
"""Runs one read statement (``?`` placeholders) on its own and returns its rows."""


def tagged(rows: list[Row]) -> list[Message]:
    """The messages of rows of :data:`COLUMNS` followed by :data:`TAGS`."""
    return [sqlbase.message_of(row, row[sqlbase.TAGS_AT] or ()) for row in rows]


def history_statement(
    persona: str,
    thread: str,
    pulse_id: str | None,
    scope: str,
    budget: HistoryBudget,
    beyond: int = 0,
) -> tuple[str, list[Any]]:
    """The statement (``?`` placeholders) and parameters of :func:`history`'s one read, for
    :func:`history_of`; its page of earlier conversation reaches ``beyond`` messages past
    the budget's (what a summary would fold, :func:`history_parts`). The page's size is a
    literal (:func:`~saimemory.sqlbase.limit_literal`: with a parameter, PostgreSQL planned
    each execution again, 1.1 against 0.64 ms at a million messages)."""
    pulse = pulse_id is not None
    not_this_pulse = "AND (m.pulse_id IS NULL OR m.pulse_id <> ?) " if pulse else ""
    earlier = (
        "SELECT e.*, 0 AS part, -e.id AS k FROM (SELECT m.* FROM messages m "
        f"WHERE m.persona = ? AND m.thread = ? AND {CONVERSATION_ROW} "
        f"AND {sqlbase.MAIN_COMMITTED} {not_this_pulse}"
        f"ORDER BY m.id DESC LIMIT {sqlbase.limit_literal(budget.max_messages + beyond)}) e"
    )
    current = (
        " UNION ALL SELECT c.*, 1, c.id FROM (SELECT m.* FROM messages m "
        "WHERE m.persona = ? AND m.pulse_id = ? AND m.thread = ? AND (m.scope = ? OR "
        f"(m.line_role = '{MAIN_LINE}' AND {CONVERSATION_ROW}))) c"
        if pulse else ""
    )
    params: list[Any] = [persona, thread]
    if pulse:
        params += [pulse_id, persona, pulse_id, thread, scope]
    return (f"SELECT {COLUMNS}, {TAGS}, o.part FROM ({earlier}{current}) o "
            "ORDER BY o.part, o.k", params)


def history_parts(rows: list[Row]) -> tuple[list[Message], list[Message]]:
    """The messages of rows of :func:`history_statement`: its page of earlier conversation
    (newest first), and the pulse's (in write order)."""
    split = next((i for i, row in enumerate(rows) if row[sqlbase.TAGS_AT + 1] == 1),
                 len(rows))
    messages = tagged(rows)
    return messages[:split], messages[split:]


def history_of(rows: list[Row], budget: HistoryBudget) -> list[Message]:
    """The history of rows of :func:`history_statement`."""
    page, current = history_parts(rows)
    return spend(page, budget) + clamp(current, budget)


def history(
    fetch: Fetch,
    persona: str,
    thread: str,
    pulse_id: str | None,
    scope: str,
    budget: HistoryBudget,
) -> list[Message]:
    """The pulse rule (:meth:`~saimemory.base.MessageStore.history`) for a budget of at
    most one page of earlier conversation: that page (newest first) and, with a pulse, the
    pulse's rows of ``scope`` and its conversation rows of any scope (oldest first), read
    together as the two parts of one statement."""
    return history_of(fetch(*history_statement(persona, thread, pulse_id, scope, budget)),
                      budget)


def recent(fetch: Fetch, persona: str, limit: int, thread: str | None) -> list[Message]:
    """The newest ``limit`` messages of a persona (of one thread, if named), oldest first."""
    where = "m.persona = ?" if thread is None else "m.persona = ? AND m.thread = ?"
    params = [persona, limit] if thread is None else [persona, thread, limit]
    return tagged(fetch(
        f"SELECT {COLUMNS}, {TAGS} FROM (SELECT m.* FROM messages m WHERE {where} "
        "ORDER BY m.id DESC LIMIT ?) o ORDER BY o.id",
        params,
    ))
