"""PostgreSQL only: an append is one statement (migration 9's function) that still takes the
persona's lock, and one whose connection is lost after it committed is not written twice."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from saimemory import CONVERSATION_TAG, NewMessage
from saimemory.errors import InvalidMessageError
from saimemory.migrations import APPEND_FUNCTION, POSTGRES_MIGRATIONS
from saimemory.sqlbase import SqlStore
from tests.saimemory.conftest import POSTGRES_DSN

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set"),
]

APPEND_VERSION = 9


def has_append_function(store: Any, schema: str) -> bool:
    rows = store._conn.execute(
        "SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = %s AND p.proname = %s", [schema, APPEND_FUNCTION]).fetchall()
    return bool(rows)


def test_a_fresh_schema_has_the_append_function(pg: tuple[Any, str]) -> None:
    store, schema = pg
    assert POSTGRES_MIGRATIONS[APPEND_VERSION - 1].version == APPEND_VERSION
    assert store.schema_version() == POSTGRES_MIGRATIONS[-1].version >= APPEND_VERSION
    assert has_append_function(store, schema)


def test_a_store_of_version_8_gains_the_function_and_keeps_appending(
    pg: tuple[Any, str],
) -> None:
    from saimemory.postgres import PostgresStore

    store, schema = pg
    with store._write("alice") as tx:
        tx.run(f"DROP FUNCTION {APPEND_FUNCTION}")
        tx.run("DELETE FROM schema_migrations WHERE version >= ?", (APPEND_VERSION,))
    old = SqlStore.append(store, NewMessage("alice", "user", "written by version 8",
                                            tags=(CONVERSATION_TAG,)))
    assert store.schema_version() == APPEND_VERSION - 1
    assert not has_append_function(store, schema)
    assert POSTGRES_DSN is not None
    again = PostgresStore(POSTGRES_DSN, schema=schema)
    try:
        assert again.schema_version() == again.migrations[-1].version >= APPEND_VERSION
        assert has_append_function(again, schema)
        new = again.append(NewMessage("alice", "user", "after", tags=(CONVERSATION_TAG,)))
        assert new.id > old.id
        assert [m.content for m in again.history("alice")] == ["written by version 8", "after"]
    finally:
        again.close()


def waiting_for_advisory_lock(store: Any, pid: int) -> bool:
    rows = store._conn.execute(
        "SELECT 1 FROM pg_locks WHERE pid = %s AND locktype = 'advisory' AND NOT granted",
        [pid]).fetchall()
    return bool(rows)


def test_an_append_waits_for_the_personas_lock_and_comes_after(pg: tuple[Any, str]) -> None:
    """A write transaction of the persona holds its lock: the one-statement append waits for
    it, and its id comes after the message that transaction wrote."""
    from saimemory.postgres import PostgresStore

    store, schema = pg
    store.append(NewMessage("alice", "user", "first"))
    assert POSTGRES_DSN is not None
    writer = PostgresStore(POSTGRES_DSN, schema=schema)
    appender_pid = store._conn.info.backend_pid
    done: list[Any] = []
    appending = threading.Thread(
        target=lambda: done.append(store.append(NewMessage("alice", "user", "waited"))))
    try:
        with writer._write("alice") as tx:
            appending.start()
            deadline = time.monotonic() + 30
            while not waiting_for_advisory_lock(writer, appender_pid):
                assert time.monotonic() < deadline, "the append never waited for the lock"
                time.sleep(0.01)
            assert done == []
            held = tx.fetch(
                "INSERT INTO messages (persona, thread, role, content, created_us, uid) "
                "VALUES ('alice', 'alice:main', 'user', 'held the lock', 0, 'u-held') "
                "RETURNING id")[0][0]
        appending.join(timeout=30)
        assert len(done) == 1 and done[0].id > held
        assert [m.content for m in store.recent("alice")] == ["first", "held the lock", "waited"]
    finally:
        appending.join(timeout=30)
        writer.close()


class _LostAfterCommit:
    """A connection whose statement runs and commits on the server, after which the socket
    fails before the answer is read (no SQLSTATE, not yet ``broken``), as a kernel closing
    it under psycopg's wait does."""

    closed = False
    broken = False

    def __init__(self, real: Any) -> None:
        self.real = real
        self.calls = 0

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        import psycopg

        self.calls += 1
        self.real.execute(*args, **kwargs)
        raise psycopg.OperationalError("connection socket closed")

    def close(self) -> None:
        self.closed = True
        self.real.close()


def test_an_append_whose_answer_was_lost_is_not_written_twice(pg: tuple[Any, str]) -> None:
    store, _ = pg
    store.append(NewMessage("alice", "user", "before"))
    lost = _LostAfterCommit(store._conn)
    store._conn = lost
    got = store.append(NewMessage("alice", "user", "committed, answer lost", pulse_id="p",
                                  tags=("kept",)))
    assert lost.calls == 1 and lost.closed
    stored = store.recent("alice")
    assert [m.content for m in stored] == ["before", "committed, answer lost"]
    assert stored[-1] == got and got.tags == ("kept", "pulse:p")


class _FailsOnce:
    """A connection whose first statement never reaches the server: the socket fails (no
    SQLSTATE, not yet ``broken``)."""

    closed = False
    broken = False

    def __init__(self, real: Any) -> None:
        self.real = real

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        import psycopg

        raise psycopg.OperationalError("connection socket closed")

    def close(self) -> None:
        self.closed = True
        self.real.close()


def test_a_retried_append_still_refuses_a_uid_the_persona_has(pg: tuple[Any, str]) -> None:
    """After a lost connection the retry finds only its own message (same uid, time and text);
    another message holding the uid is still a constraint error."""
    store, _ = pg
    first = store.append(NewMessage("alice", "user", "one"))
    store._conn = _FailsOnce(store._conn)
    with pytest.raises(InvalidMessageError, match="already has a message with this uid"):
        store.append(NewMessage("alice", "user", "two", uid=first.uid))
    assert [m.content for m in store.recent("alice")] == ["one"]
