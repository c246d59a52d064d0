"""SAIMemory: the persona message store and pulse-scoped context assembly."""

from __future__ import annotations

from pathlib import Path

from saimemory.base import MessageStore
from saimemory.errors import MemoryStoreError
from saimemory.records import (
    CONVERSATION_TAG,
    ROOT_SCOPE,
    HistoryBudget,
    Message,
    NewMessage,
    Persona,
    SearchHit,
    Thread,
)


def open_store(target: str | Path) -> MessageStore:
    """Open a store: a ``postgresql://`` (or ``postgres://``) DSN, else a SQLite file path.

    The SQLite file and its parent directories are created when missing; migrations are
    applied on open. Raises :class:`MemoryStoreError` when the target cannot be used.
    """
    text = str(target)
    if text.startswith(("postgresql://", "postgres://")):
        from saimemory.postgres import PostgresStore

        return PostgresStore(text)
    from saimemory.sqlite import SQLiteStore

    return SQLiteStore(Path(text))


__all__ = [
    "CONVERSATION_TAG",
    "ROOT_SCOPE",
    "HistoryBudget",
    "MemoryStoreError",
    "Message",
    "MessageStore",
    "NewMessage",
    "Persona",
    "SearchHit",
    "Thread",
    "open_store",
]
