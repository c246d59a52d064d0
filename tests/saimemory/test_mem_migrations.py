"""Schema migrations: applied on open, from empty and older files; refusals change nothing."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from saimemory import NewMessage
from saimemory.errors import InvalidMessageError, SchemaError
from saimemory.migrations import SQLITE_MIGRATIONS
from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore

LATEST = SQLITE_MIGRATIONS[-1].version


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def versions(path: Path) -> list[int]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]


def test_empty_file_gets_every_migration(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.touch()
    store = SQLiteStore(path)
    assert store.schema_version() == LATEST
    store.close()
    assert versions(path) == list(range(1, LATEST + 1))


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    SQLiteStore(path).close()
    SQLiteStore(path).close()
    assert versions(path) == list(range(1, LATEST + 1))


def build_v1_file(path: Path) -> None:
    """A store as the first released schema wrote it, with messages and no search index."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                 " applied_us BIGINT NOT NULL)")
    for statement in SQLITE_MIGRATIONS[0].statements:
        conn.execute(statement)
    conn.execute("INSERT INTO schema_migrations VALUES (1, 'threads, messages, tags', 0)")
    conn.execute("INSERT INTO threads VALUES ('alice:main', 'alice', NULL, 'main', 1, 0)")
    for i, text in enumerate(["昔の会話です", "an old conversation"], start=1):
        conn.execute("INSERT INTO messages (persona, thread, role, content, created_us, scope, "
                     "metadata) VALUES ('alice', 'alice:main', 'user', ?, ?, '', '{}')",
                     (text, i))
        conn.execute("INSERT INTO message_tags VALUES (?, 0, 'conversation', 'alice', "
                     "'alice:main')", (i,))
    conn.commit()
    conn.close()


def test_older_schema_is_migrated_and_keeps_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    build_v1_file(path)
    store = SQLiteStore(path)
    try:
        assert store.schema_version() == LATEST
        old = ["昔の会話です", "an old conversation"]
        assert [m.content for m in store.history("alice")] == old
        assert [h.message.content for h in store.search("alice", "昔の会話")] == ["昔の会話です"]
        new = store.append(NewMessage("alice", "user", "新しい会話"))
        assert new.id == 3
        uids = [m.uid for m in store.iter_messages("alice")]
        assert len(set(uids)) == 3 and all(len(uid) == 32 for uid in uids)
        assert [h.message.id for h in store.search("alice", "会話")] == [3, 1]
    finally:
        store.close()


def test_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_migrations VALUES (?, 'from the future', 0)", (LATEST + 1,))
    conn.commit()
    conn.close()
    before = digest(path)
    with pytest.raises(SchemaError, match=f"schema version {LATEST + 1}, newer") as info:
        SQLiteStore(path)
    assert info.value.code == "MEM003"
    assert digest(path) == before


def test_gap_in_recorded_versions_is_reported_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM schema_migrations WHERE version = 1")
    with pytest.raises(SchemaError, match="looks corrupt"):
        SQLiteStore(path)


def test_garbage_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.write_bytes(b"this is not a database at all\n" * 200)
    before = digest(path)
    with pytest.raises(SchemaError, match="not a SQLite database"):
        SQLiteStore(path)
    assert digest(path) == before


def test_damaged_store_is_reported_as_corrupt_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    for i in range(200):
        store.append(NewMessage("alice", "user", f"message {i} " + "x" * 200))
    store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    damaged = bytearray(path.read_bytes())
    page = 4096
    damaged[page:2 * page] = b"\xff" * page
    path.write_bytes(bytes(damaged))
    with pytest.raises(SchemaError, match="corrupt .*it was not changed") as info:
        SQLiteStore(path).recent("alice")
    assert info.value.code == "MEM003"
    assert path.read_bytes() == bytes(damaged)


def test_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE messages (id TEXT PRIMARY KEY, body TEXT)")
    before = digest(path)
    with pytest.raises(SchemaError, match="not a SAIMemory store"):
        SQLiteStore(path)
    assert digest(path) == before


def test_newer_schema_is_refused_on_every_backend(open_same: object) -> None:
    first: SqlStore = open_same()  # type: ignore[operator]
    first.append(NewMessage("alice", "user", "kept"))
    with first._write("alice") as tx:
        tx.run("INSERT INTO schema_migrations (version, name, applied_us) VALUES (?, ?, 0)",
               (99, "future"))
    first.close()
    with pytest.raises(SchemaError, match="newer than this SAIMemory"):
        open_same()  # type: ignore[operator]


def test_uid_migration_gives_every_stored_message_its_own_uid(open_same: object) -> None:
    """A store as schema version 2 left it (no uid) is migrated on open, on every backend."""
    first: SqlStore = open_same()  # type: ignore[operator]
    for text in ("one", "two", "two"):
        first.append(NewMessage("alice", "user", text))
    with first._write("alice") as tx:
        tx.run("DROP INDEX messages_uid")
        tx.run("ALTER TABLE messages DROP COLUMN uid")
        tx.run("DROP TABLE current_plans")  # and what later migrations made
        tx.run("DROP TABLE plans")
        tx.run("DELETE FROM schema_migrations WHERE version >= 3")
    first.close()
    store: SqlStore = open_same()  # type: ignore[operator]
    assert store.schema_version() == store.migrations[-1].version
    messages = list(store.iter_messages("alice"))
    assert [m.content for m in messages] == ["one", "two", "two"]
    assert len({m.uid for m in messages}) == 3 and all(len(m.uid) == 32 for m in messages)
    with pytest.raises(InvalidMessageError, match="uid"):
        store.append(NewMessage("alice", "user", "three", uid=messages[0].uid))
