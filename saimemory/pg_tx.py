"""The transactions of the PostgreSQL backend: the driver (psycopg 3, the ``postgres``
extra, None when it is not installed), SQL with ``?`` placeholders made psycopg's, and the
two :class:`~saimemory.tx.Tx` kinds (:class:`PgTx`, :class:`AloneTx`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from saimemory.tx import Row

psycopg: Any
pgsql: Any
try:
    import psycopg
    from psycopg import sql as pgsql
except ImportError:  # pragma: no cover - depends on the installed extras
    psycopg = None
    pgsql = None

_PLACEHOLDER = re.compile(r"\?")


def to_psycopg(sql: str) -> str:
    """``sql`` with psycopg's placeholders (``%s``) for ours (``?``), a literal ``%``
    doubled."""
    return _PLACEHOLDER.sub("%s", sql.replace("%", "%%"))


def write_start(personas: Sequence[str]) -> list[Any]:
    """The statements that start a write transaction: ``BEGIN`` and each persona's lock (the
    key migration 9's append function takes too), for one simple query."""
    return [pgsql.SQL("BEGIN"), *(
        pgsql.SQL("SELECT pg_advisory_xact_lock(hashtextextended({}, 0))").format(
            pgsql.Literal(persona)) for persona in personas)]


class PgTx:
    """A :class:`~saimemory.sqlbase.Tx` over one psycopg connection. A search's transaction
    knows its persona's number of messages (``counted``) and that it plans each statement
    afresh (``custom_plans``): both came with its ``BEGIN``."""

    def __init__(self, conn: Any, counted: tuple[str, int] | None = None) -> None:
        self._conn = conn
        self.counted = counted
        self.custom_plans = counted is not None

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return list(self._conn.execute(to_psycopg(sql), list(params)).fetchall())

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._conn.execute(to_psycopg(sql), list(params))

    def fetch_and_commit(self, sql: str, params: Sequence[Any]) -> list[Row]:
        """The rows of ``sql``, the transaction's last statement, and the transaction
        committed in the same round trip (pipelined: the ``COMMIT`` does not run if the
        statement fails, and the caller's rollback ends the transaction as before)."""
        if not psycopg.Pipeline.is_supported():
            return self.fetch(sql, params)  # committed by the transaction's end, as before
        with self._conn.pipeline():
            cursor = self._conn.execute(to_psycopg(sql), list(params))
            self._conn.execute("COMMIT")
        return list(cursor.fetchall())


class AloneTx:
    """A :class:`~saimemory.sqlbase.Tx` for a read of exactly one statement, run alone in
    autocommit (one round trip, its own snapshot); a second statement would read another
    snapshot, so it is refused."""

    def __init__(self, fetch: Callable[[str, Sequence[Any]], list[Row]]) -> None:
        self._fetch: Callable[[str, Sequence[Any]], list[Row]] | None = fetch

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        fetch, self._fetch = self._fetch, None
        if fetch is None:
            raise AssertionError("a read of one statement ran a second one")
        return fetch(sql, params)

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        raise AssertionError("a read of one statement cannot write")


