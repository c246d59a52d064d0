"""Open and closed sub-threads, their chronicles and a persona's active thread (every
backend)."""

from __future__ import annotations

from pathlib import Path

import pytest

from saimemory import NewMessage
from saimemory.errors import NotFoundError
from saimemory.migrations import SQLITE_MIGRATIONS
from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore
from sea.cli import main
from tests.saimemory.conftest import StoreFactory

THREAD_STATES_VERSION = 6


def test_an_opened_thread_is_active_until_it_is_closed(store: SqlStore) -> None:
    main = store.main_thread("alice")
    assert store.active_thread("alice") == main and not main.open
    opened = store.open_thread("alice", "alice:work", title="Subagent: work")
    assert (opened.open, opened.parent, opened.closed_at, opened.chronicle) == (
        True, main.id, None, None)
    assert store.active_thread("alice") == opened
    inner = store.open_thread("alice", "alice:inner", title="inner", parent=opened.id)
    assert store.active_thread("alice").id == inner.id and inner.parent == opened.id
    store.append(NewMessage("alice", "user", "in the thread", thread=opened.id))
    closed = store.close_thread("alice", inner.id, chronicle="found it")
    assert not closed.open and closed.closed_at is not None and closed.chronicle == "found it"
    assert store.active_thread("alice").id == opened.id
    store.close_thread("alice", opened.id)
    assert store.active_thread("alice") == main
    listed = {t.id: t for t in store.threads("alice")}
    assert listed[inner.id].chronicle == "found it" and not listed[opened.id].open
    # opened again (a resumed call): open, its close time and chronicle cleared, same thread
    again = store.open_thread("alice", inner.id, title="inner", parent=opened.id)
    assert again.open and again.closed_at is None and again.chronicle is None
    assert again.created_at == inner.created_at


def test_threads_made_otherwise_are_not_open(store: SqlStore) -> None:
    made = store.create_thread("alice", title="side")
    assert not made.open
    assert store.active_thread("alice") == store.main_thread("alice")


def test_only_the_personas_own_sub_threads_open_and_close(store: SqlStore) -> None:
    main = store.main_thread("alice")
    store.open_thread("bob", "bob:work", title="work")
    with pytest.raises(NotFoundError):
        store.open_thread("alice", "bob:work", title="work")
    with pytest.raises(NotFoundError):
        store.close_thread("alice", "bob:work")
    with pytest.raises(NotFoundError):
        store.close_thread("alice", main.id)
    with pytest.raises(NotFoundError):
        store.open_thread("alice", main.id, title="main")
    with pytest.raises(NotFoundError):
        store.close_thread("alice", "alice:nothing")
    assert store.active_thread("bob").id == "bob:work"


def test_deleting_a_persona_removes_its_thread_states(store: SqlStore) -> None:
    store.open_thread("alice", "alice:work", title="work")
    store.open_thread("bob", "bob:work", title="work")
    store.delete_persona("alice")
    assert store.threads("alice") == []
    assert store.active_thread("bob").id == "bob:work"
    reopened = store.open_thread("alice", "alice:work", title="work")
    assert reopened.open and reopened.chronicle is None


def test_the_thread_states_migration_applies_again_over_its_table(
    open_same: StoreFactory,
) -> None:
    assert SQLITE_MIGRATIONS[THREAD_STATES_VERSION - 1].version == THREAD_STATES_VERSION
    first = open_same()
    first.open_thread("alice", "alice:work", title="work")
    with first._write("alice") as tx:
        tx.run("DELETE FROM schema_migrations WHERE version >= ?", (THREAD_STATES_VERSION,))
    first.close()
    again = open_same()
    assert again.schema_version() >= THREAD_STATES_VERSION
    assert again.active_thread("alice").id == "alice:work"


def test_the_threads_command_shows_open_and_closed_threads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "memory.db")
    store = SQLiteStore(db)
    store.open_thread("alice", "alice:done", title="Subagent: done")
    store.close_thread("alice", "alice:done", chronicle="ok")
    store.open_thread("alice", "alice:busy", title="Subagent: busy")
    store.close()
    assert main(["memory", "threads", "--db", db, "--persona", "alice"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("alice:main  main  ") and lines[0].endswith("+00:00")
    assert lines[1].startswith("alice:done  Subagent: done (in alice:main)  ")
    assert "  closed " in lines[1]
    assert lines[2].startswith("alice:busy  ") and lines[2].endswith("  open")
