"""The one store fixture every conformance test runs against: SQLite always, PostgreSQL
when ``SEA_TEST_POSTGRES_DSN`` is set (each test in a fresh schema, dropped afterwards)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


@dataclass(frozen=True)
class StoreSpec:
    """Where this test's store lives; picklable, so other processes can open it too."""

    backend: str
    path: Path
    schema: str

    def open(self) -> SqlStore:
        """A new connection to the store."""
        if self.backend == "sqlite":
            return SQLiteStore(self.path)
        from saimemory.postgres import PostgresStore

        assert POSTGRES_DSN is not None
        return PostgresStore(POSTGRES_DSN, schema=self.schema)


def drop_schema(schema: str) -> None:
    """Drop a test schema without opening it as a store (it may be unopenable on purpose)."""
    import psycopg

    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(params=BACKENDS)
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    """The store of this test, on the backend under test."""
    found = StoreSpec(str(request.param), tmp_path / "memory.db", f"t_{uuid.uuid4().hex[:20]}")
    yield found
    if found.backend == "postgres":
        drop_schema(found.schema)


@pytest.fixture
def open_same(spec: StoreSpec) -> Iterator[StoreFactory]:
    """Opens (again) the one store of this test: same file or same PostgreSQL schema."""
    opened: list[SqlStore] = []

    def factory() -> SqlStore:
        store = spec.open()
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def store(open_same: StoreFactory) -> SqlStore:
    """A fresh, empty store of the backend under test."""
    return open_same()


@pytest.fixture
def pg() -> Iterator[tuple[Any, str]]:
    """A PostgreSQL store in a fresh schema (dropped afterwards), and the schema's name."""
    from saimemory.postgres import PostgresStore

    assert POSTGRES_DSN is not None
    schema = f"t_{uuid.uuid4().hex[:20]}"
    store = PostgresStore(POSTGRES_DSN, schema=schema)
    yield store, schema
    store.close()
    drop_schema(schema)
