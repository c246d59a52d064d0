"""SQLite keeps each persona's number of messages (migration 9) for the ``any`` search's
weights: it is always the count of the persona's messages, capped as the count was."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from saimemory import NewMessage
from saimemory.any_match import COLLECTION_CAP
from saimemory.errors import InvalidMessageError
from saimemory.migrations import SQLITE_MIGRATIONS
from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore
from tests.saimemory.older import Version8


def kept_and_counted(store: SqlStore, persona: str) -> tuple[int, int]:
    """The kept count and the count of the persona's messages as the search counted it."""
    with store._read() as tx:
        return store._collection(tx, persona), SqlStore._collection(store, tx, persona)


def counted_after_the_store_writes(store: SqlStore) -> None:
    """An append, several, an import (then the same import skipped) and a batch rolled
    back: the kept counts are the counts (aoi 3, ken 1), on either backend."""
    assert kept_and_counted(store, "aoi") == (0, 0)
    store.append(NewMessage("aoi", "user", "one"))
    store.append_many([NewMessage("aoi", "user", "two"), NewMessage("ken", "user", "x")])
    third = NewMessage("aoi", "user", "three", created_at=datetime(2026, 1, 1, tzinfo=UTC),
                       uid="u3")
    store.import_messages([third])
    assert store.import_messages([third]).skipped == 1
    with pytest.raises(InvalidMessageError):  # rolled back as a whole
        store.append_many([NewMessage("aoi", "user", "four", uid="u4"),
                           NewMessage("aoi", "user", "four again", uid="u4")])
    assert kept_and_counted(store, "aoi") == (3, 3)
    assert kept_and_counted(store, "ken") == (1, 1)


def test_the_kept_count_follows_every_write(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        counted_after_the_store_writes(store)
        store.delete_persona("aoi")
        assert kept_and_counted(store, "aoi") == (0, 0)
        store.append(NewMessage("aoi", "user", "again"))
        assert kept_and_counted(store, "aoi") == (1, 1)
        assert kept_and_counted(store, "ken") == (1, 1)
    finally:
        store.close()


def test_the_kept_count_is_capped_as_the_count_was(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        store.append_many([NewMessage("aoi", "user", f"note {i}")
                           for i in range(COLLECTION_CAP + 5)])
        assert kept_and_counted(store, "aoi") == (COLLECTION_CAP, COLLECTION_CAP)
    finally:
        store.close()


def test_an_older_store_gains_the_counts_of_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old = Version8(path)
    old.append_many([NewMessage(p, "user", f"{p} note {i} about the weather")
                     for i in range(7) for p in ("aoi", "ken", "aoi")])
    found = old.search("aoi", "what about the weather note 3?", match="any")
    old.close()
    store = SQLiteStore(path)
    try:
        assert store.schema_version() == len(SQLITE_MIGRATIONS)
        assert kept_and_counted(store, "aoi") == (14, 14)
        assert kept_and_counted(store, "ken") == (7, 7)
        assert store.search("aoi", "what about the weather note 3?", match="any") == found
    finally:
        store.close()
