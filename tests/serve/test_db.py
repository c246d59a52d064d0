"""The server's tables in the store's database: one statement text on both backends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sea.errors import ServerDatabaseError
from sea.serve.db import ServerDB

TABLE = "CREATE TABLE IF NOT EXISTS sea_probe (id text PRIMARY KEY, n integer NOT NULL)"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    dsn = os.environ.get("SEA_TEST_POSTGRES_DSN")
    if request.param == "sqlite":
        location = str(tmp_path / "memory.sqlite")
    else:
        if not dsn:
            pytest.skip("SEA_TEST_POSTGRES_DSN is not set (a PostgreSQL server is needed)")
        location = f"{dsn}?schema=sea_serve_db_test"
    opened = ServerDB(location)
    opened.create([TABLE])
    opened.execute("DELETE FROM sea_probe")
    yield opened
    opened.close()


def test_statements_and_transactions_on_both_backends(db: ServerDB) -> None:
    with db.transaction():
        db.execute("INSERT INTO sea_probe VALUES (?, ?)", ["a", 1])
        db.execute("INSERT INTO sea_probe VALUES (?, ?)", ["b", 2])
    assert db.fetch("SELECT id, n FROM sea_probe ORDER BY id") == [("a", 1), ("b", 2)]
    assert db.fetch_one("SELECT n FROM sea_probe WHERE id = ?", ["b"]) == (2,)
    assert db.fetch_one("SELECT n FROM sea_probe WHERE id = ?", ["zz"]) is None


def test_a_failed_transaction_writes_nothing(db: ServerDB) -> None:
    with pytest.raises(ServerDatabaseError) as caught:
        with db.transaction():
            db.execute("INSERT INTO sea_probe VALUES (?, ?)", ["a", 1])
            db.execute("INSERT INTO sea_probe VALUES (?, ?)", ["a", 2])  # same key
    assert caught.value.code == "SEA801"
    assert db.fetch("SELECT id FROM sea_probe") == []


def test_a_bad_statement_is_a_coded_error_and_the_connection_goes_on(db: ServerDB) -> None:
    with pytest.raises(ServerDatabaseError, match="nope"):
        db.execute("SELECT nope FROM sea_probe")
    db.execute("INSERT INTO sea_probe VALUES (?, ?)", ["c", 3])
    assert db.fetch("SELECT n FROM sea_probe") == [(3,)]


def test_a_sqlite_file_in_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ServerDatabaseError, match="cannot open"):
        ServerDB(str(tmp_path / "no" / "such" / "memory.sqlite"))
