"""The one store fixture every conformance test runs against: SQLite always, PostgreSQL
when ``SEA_TEST_POSTGRES_DSN`` is set (each test in a fresh schema, dropped afterwards)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore

POSTGRES_DSN = os.environ.get("SEA_TEST_POSTGRES_DSN")
BACKENDS = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set"),
        ],
    ),
]

StoreFactory = Callable[[], SqlStore]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend under test."""
    return str(request.param)


@pytest.fixture
def open_same(backend: str, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens (again) the one store of this test: same file or same PostgreSQL schema."""
    opened: list[SqlStore] = []
    schema = f"t_{uuid.uuid4().hex[:20]}"

    def factory() -> SqlStore:
        if backend == "sqlite":
            store: SqlStore = SQLiteStore(tmp_path / "memory.db")
        else:
            from saimemory.postgres import PostgresStore

            assert POSTGRES_DSN is not None
            store = PostgresStore(POSTGRES_DSN, schema=schema)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()
    if backend == "postgres":
        from saimemory.postgres import PostgresStore

        assert POSTGRES_DSN is not None
        cleaner = PostgresStore(POSTGRES_DSN, schema=schema)
        cleaner.drop_schema()
        cleaner.close()


@pytest.fixture
def store(open_same: StoreFactory) -> SqlStore:
    """A fresh, empty store of the backend under test."""
    return open_same()
