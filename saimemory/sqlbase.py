"""What the SQLite and PostgreSQL backends share: the queries of the store contract.

:class:`SqlStore` is made of the parts of the contract, each a module of its own over the
transactions of :class:`~saimemory.sql_core.SqlCore`: writes (:mod:`saimemory.sql_writes`),
the records beside messages (:mod:`saimemory.sql_records`), reads (:mod:`saimemory.sql_reads`)
and search (:mod:`saimemory.sql_search`). Backends provide transactions, the per-persona
write lock, the search query and error translation; everything else (the pulse rule,
threads, export order) is written once so both backends behave the same.
"""

from __future__ import annotations

from saimemory.errors import InvalidMessageError
from saimemory.sql_core import (
    COLUMNS,
    MAIN_COMMITTED,
    TAGS_AT,
    SqlCore,
    limit_literal,
    message_of,
)
from saimemory.sql_reads import HISTORY_PAGE, PAGE, SqlReads
from saimemory.sql_records import SqlRecords
from saimemory.sql_search import CONTENT_CHUNK, SqlSearch
from saimemory.sql_writes import TAG_PAGE, SqlWrites
from saimemory.tx import Row, Tx, main_thread_id


class SqlStore(SqlWrites, SqlRecords, SqlReads, SqlSearch):
    """The store contract over a SQL database with the schema of the migrations."""


def constraint_error(where: str, exc: Exception) -> InvalidMessageError:
    """A write the database refused for a constraint (the transaction wrote nothing)."""
    if "uid" in str(exc):
        return InvalidMessageError(
            f"{where}: the persona already has a message with this uid; nothing written ({exc})"
        )
    return InvalidMessageError(f"{where}: constraint violated, nothing written: {exc}")


__all__ = [
    "COLUMNS",
    "CONTENT_CHUNK",
    "HISTORY_PAGE",
    "MAIN_COMMITTED",
    "PAGE",
    "TAGS_AT",
    "TAG_PAGE",
    "Row",
    "SqlCore",
    "SqlStore",
    "Tx",
    "constraint_error",
    "limit_literal",
    "main_thread_id",
    "message_of",
]
