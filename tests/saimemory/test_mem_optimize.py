"""`optimize` (maintenance) changes nothing a reader sees, on both backends, and on SQLite
leaves a search less to read; `sea memory optimize` runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from saimemory import NewMessage
from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore
from sea.cli import main
from tests.saimemory.test_mem_search_scale import sqlite_steps

WORDS = ["weather", "garden", "東京タワー", "抹茶", "walk", "movie", "ok", "猫"]


def _append_one_by_one(store: SqlStore, count: int) -> None:
    """Messages appended as a persona's pulses append them: one transaction each, so each
    leaves the full-text index a small segment of its own."""
    for i in range(count):
        words = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 5))
        persona = "aoi" if i % 3 else "ken"
        store.append(NewMessage(persona, "user", f"note {i}: {words}", tags=("conversation",)))


QUERIES = [("weather", "all"), ("東京タワー", "all"), ("ok", "all"), ("猫", "all"),
           ("what about the garden walk?", "any"), ("ok 抹茶", "any"), ("zebra", "any")]


def _everything(store: SqlStore) -> list[object]:
    found: list[object] = [store.recent("aoi", limit=500), store.recent("ken", limit=500)]
    for query, match in QUERIES:
        hits = store.search("aoi", query, limit=50, match=match)  # type: ignore[arg-type]
        found.append([(hit.message.id, hit.snippet, hit.rank) for hit in hits])
    return found


def test_optimize_changes_nothing_a_reader_sees(store: SqlStore) -> None:
    _append_one_by_one(store, 240)
    before = _everything(store)
    assert all(before[2:5])  # the words are there to be found
    store.optimize()
    assert _everything(store) == before
    store.optimize()  # again: nothing left to merge, nothing changes
    assert _everything(store) == before
    store.append(NewMessage("aoi", "user", "after the maintenance: weather"))
    assert store.search("aoi", "maintenance weather")[0].message.content.startswith("after")


def test_after_optimize_a_sqlite_search_reads_less(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        _append_one_by_one(store, 400)

        def search() -> object:
            return store.search("aoi", "東京タワー weather", limit=5)

        found, steps = search(), sqlite_steps(store, search)
        store.optimize()
        assert search() == found
        assert sqlite_steps(store, search) < steps
    finally:
        store.close()


def test_sea_memory_optimize(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    _append_one_by_one(store, 30)
    store.close()
    assert main(["memory", "optimize", "--db", str(path)]) == 0
    assert "optimized in" in capsys.readouterr().err
    assert main(["memory", "search", "weather", "--persona", "aoi", "--db", str(path)]) == 0
    assert "weather" in capsys.readouterr().out
