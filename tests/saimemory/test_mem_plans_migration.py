"""Migration 4 (plans): a store of the previous schema version gains plans on open, on every
backend, and keeps its messages; a SQLite file written by schema 3 migrates as well."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from saimemory import NewMessage
from saimemory.migrations import POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS
from saimemory.plans import Plan
from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore

PLANS_VERSION = 4


def test_both_backends_know_the_plans_migration() -> None:
    for known in (SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS):
        assert [m.version for m in known] == list(range(1, len(known) + 1))
        assert known[PLANS_VERSION - 1].name == "plans and each persona's current plan"


def _plan(plan_id: str) -> Plan:
    return Plan(plan_id, "alice", "title", "content", datetime(2025, 1, 1, tzinfo=UTC))


def test_a_store_of_the_previous_version_gains_plans(open_same: object) -> None:
    first: SqlStore = open_same()  # type: ignore[operator]
    first.append(NewMessage("alice", "user", "kept across the migration"))
    with first._write("alice") as tx:
        tx.run("DROP TABLE current_plans")
        tx.run("DROP TABLE plans")
        tx.run("DELETE FROM schema_migrations WHERE version >= ?", (PLANS_VERSION,))
    assert first.schema_version() == PLANS_VERSION - 1
    first.close()
    store: SqlStore = open_same()  # type: ignore[operator]
    assert store.schema_version() == store.migrations[-1].version >= PLANS_VERSION
    assert [m.content for m in store.recent("alice")] == ["kept across the migration"]
    saved = store.save_plan(_plan("p1"), make_current=True)
    assert store.current_plan("alice") == saved


def test_a_schema_3_sqlite_file_migrates(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                 " applied_us BIGINT NOT NULL)")
    for migration in SQLITE_MIGRATIONS[:PLANS_VERSION - 1]:
        for statement in migration.statements:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 0)",
                      (migration.version, migration.name))
    conn.execute("INSERT INTO threads VALUES ('alice:main', 'alice', NULL, 'main', 1, 0)")
    conn.execute("INSERT INTO messages (persona, thread, role, content, created_us, scope, "
                 "metadata, uid) VALUES ('alice', 'alice:main', 'user', 'old', 1, '', '{}', 'u1')")
    conn.commit()
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "plans" not in tables
    store = SQLiteStore(path)
    try:
        assert store.schema_version() == SQLITE_MIGRATIONS[-1].version
        assert [m.uid for m in store.iter_messages("alice")] == ["u1"]
        store.save_plan(_plan("p1"))
        assert [p.id for p in store.list_plans("alice")] == ["p1"]
    finally:
        store.close()
