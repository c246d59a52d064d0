"""SAIMemory: the persona message store (history by the pulse rule, search, export).

- :class:`MessageStore` (``base.py``) is the contract; :func:`open_store` picks a backend:
  :class:`saimemory.sqlite.SQLiteStore` (one file, WAL, ``BEGIN IMMEDIATE`` per write) or
  :class:`saimemory.postgres.PostgresStore` (psycopg 3, per-persona advisory lock per
  write). Both share their queries (``sqlbase.py``: the core, writes, records, reads and
  search, a module each) and numbered migrations (``migrations.py``), applied on open; a
  newer, foreign or corrupt database is refused with
  :class:`~saimemory.errors.SchemaError` and left untouched.
- Every write of a pulse carries ``pulse:<id>``, ``playbook:<name>`` and ``node:<id>`` tags,
  added by the store from :class:`NewMessage` fields. Tags live in their own indexed table.
- The pulse rule (:meth:`MessageStore.history`): earlier ``conversation`` messages within a
  budget, then this pulse's messages of this scope (and its conversation of any scope), in
  write order. Ids give the order; timestamps never do.
- Search: words of three characters or more go through a trigram index (SQLite FTS5
  ``trigram``; PostgreSQL ``pg_trgm``), which finds substrings in Japanese and English
  alike without a language-specific tokenizer. Shorter words (猫, 東京) cannot be
  answered by a trigram index; they filter the indexed candidates when the query also
  has a longer word, and otherwise are matched with a substring scan of the persona's
  messages newest first, which stops as soon as ``limit`` hits are found. That is the
  ``all`` match mode (every word required, ranked by how much of a message the words
  make up, the same code for both backends: ``all_match.py``); the ``any`` mode, for
  natural-language questions, is described in ``any_match.py``.
- Plans (``plans.py``, seed 002): a persona's plans with their state (action specs,
  approvals, previews, results) and its current plan, saved whole with optimistic
  concurrency (``save_plan`` from a stale ``version`` is refused); what the statuses mean
  is the engine's business (``sea.engine.plans``).
- Pinned items and short-term memory (``pins.py``, seed 003's "Main"): at most five items a
  persona keeps in every conversation, and a rolling summary of its older conversation;
  call records (``calls.py``): one row per model or tool call, for statistics.
- ``jsonl.py`` exports and imports a persona as JSON lines. Which messages a model sees,
  and which model, is the engine's business (``sea.llm.context``), not the store's.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from saimemory.base import MessageStore
    from saimemory.errors import MemoryStoreError
    from saimemory.records import (
        CONVERSATION_TAG,
        ROOT_SCOPE,
        HistoryBudget,
        ImportResult,
        Message,
        NewMessage,
        NewThread,
        Persona,
        SearchHit,
        Thread,
    )

_HOMES = {
    "MessageStore": "saimemory.base",
    "MemoryStoreError": "saimemory.errors",
    **dict.fromkeys(
        ("CONVERSATION_TAG", "ROOT_SCOPE", "HistoryBudget", "ImportResult", "Message",
         "NewMessage", "NewThread", "Persona", "SearchHit", "Thread"),
        "saimemory.records",
    ),
}
"""Where each name this package offers lives. They are imported on first use, so that a
program that needs only ``saimemory.errors`` (a command's error handling) does not pay for
the store's modules."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'saimemory' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def open_store(target: str | Path) -> MessageStore:
    """Open a store: a ``postgresql://`` (or ``postgres://``) DSN, else a SQLite file path.

    A DSN may name the PostgreSQL schema of the store with ``?schema=NAME`` (default
    ``public``), so that several stores, or a store and other tables, share a database.

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
    "ImportResult",
    "MemoryStoreError",
    "Message",
    "MessageStore",
    "NewMessage",
    "NewThread",
    "Persona",
    "SearchHit",
    "Thread",
    "open_store",
]
