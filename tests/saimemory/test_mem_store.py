"""The store contract: append, provenance, threads, reads, deletion (every backend)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from saimemory import CONVERSATION_TAG, MemoryStoreError, NewMessage, open_store
from saimemory.errors import InvalidMessageError, InvalidQueryError, NotFoundError
from saimemory.sqlbase import TAG_PAGE, SqlStore
from saimemory.sqlite import SQLiteStore


def msg(content: str = "hello", **kwargs: Any) -> NewMessage:
    fields: dict[str, Any] = {"persona": "alice", "role": "user", "content": content}
    fields.update(kwargs)
    return NewMessage(**fields)


def test_append_returns_the_stored_message(store: SqlStore) -> None:
    stamp = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    got = store.append(msg("hi", tags=("conversation", "x"), metadata={"with": ["user"]},
                           created_at=stamp))
    assert got.id >= 1 and got.persona == "alice" and got.role == "user"
    assert got.content == "hi" and got.created_at == stamp
    assert got.thread == store.main_thread("alice").id
    assert got.tags == ("conversation", "x") and dict(got.metadata) == {"with": ["user"]}
    assert store.recent("alice") == [got]


def test_time_is_stamped_in_utc_and_offsets_are_kept(store: SqlStore) -> None:
    before = datetime.now(UTC)
    stamped = store.append(msg())
    assert before <= stamped.created_at <= datetime.now(UTC)
    tokyo = datetime(2025, 5, 1, 9, 0, tzinfo=timezone(timedelta(hours=9)))
    got = store.append(msg(created_at=tokyo))
    assert got.created_at == tokyo and store.recent("alice")[-1].created_at == tokyo


def test_provenance_tags_are_added_by_the_store(store: SqlStore) -> None:
    got = store.append(msg(tags=("memory_research",), pulse_id="p7", playbook="research",
                           node="save"))
    assert got.tags == ("memory_research", "pulse:p7", "playbook:research", "node:save")
    assert (got.pulse_id, got.playbook, got.node) == ("p7", "research", "save")
    assert store.recent("alice")[0].tags == got.tags
    assert [h.message.id for h in store.search("alice", "hello", tags=["node:save"])] == [got.id]


def test_duplicate_tags_are_stored_once(store: SqlStore) -> None:
    assert store.append(msg(tags=("a", "b", "a"))).tags == ("a", "b")


def test_a_persona_id_with_quotes_and_semicolons_is_only_a_name(store: SqlStore) -> None:
    # PostgreSQL takes a write's persona lock in the statement that begins the transaction
    hostile = "o'hara\"; ROLLBACK; DROP TABLE messages; --"
    got = store.append(msg(persona=hostile))
    again = store.append_many([msg("second", persona=hostile), msg("third")])
    assert [m.content for m in store.recent(hostile)] == ["hello", "second"]
    assert store.recent("alice")[-1].id == again[1].id
    assert got.persona == hostile


def test_many_tags_are_stored_in_order_over_several_statements(store: SqlStore) -> None:
    tags = tuple(f"t{i}" for i in range(2 * TAG_PAGE + 7))  # three statements' worth
    got = store.append(msg(tags=tags, pulse_id="p1"))
    assert got.tags == (*tags, "pulse:p1")
    assert store.recent("alice")[0].tags == got.tags
    assert [h.message.id for h in store.search("alice", "hello", tags=["t205"])] == [got.id]


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"role": "tool"}, "role must be one of"),
        ({"content": ""}, "content must be a non-empty string"),
        ({"content": "a\x00b"}, "NUL"),
        ({"persona": ""}, "persona must be a non-empty string"),
        ({"tags": ("pulse:p1",)}, "adds pulse:/playbook:/node: tags itself"),
        ({"tags": ("",)}, "a tag must be a non-empty string"),
        ({"tags": (" x",)}, "whitespace"),
        ({"tags": "conversation"}, "tags must be a tuple"),
        ({"metadata": {"x": object()}}, "not JSON-serializable"),
        ({"created_at": datetime(2025, 1, 1)}, "timezone-aware"),
        ({"pulse_id": ""}, "pulse_id must be"),
    ],
)
def test_bad_messages_are_rejected_and_nothing_is_written(
    store: SqlStore, fields: dict[str, Any], problem: str
) -> None:
    with pytest.raises(InvalidMessageError, match=problem) as info:
        store.append(msg(**fields))
    assert info.value.code == "MEM001"
    assert store.recent("alice") == [] and store.recent("") == []


def test_a_second_message_with_a_known_uid_is_a_constraint_error(store: SqlStore) -> None:
    first = store.append(msg("one"))
    assert len(first.uid) == 32 and first.uid != store.append(msg("two")).uid
    with pytest.raises(InvalidMessageError, match="already has a message with this uid") as info:
        store.append(msg("three", uid=first.uid))
    assert info.value.code == "MEM001"
    assert [m.content for m in store.recent("alice")] == ["one", "two"]
    assert store.append(NewMessage("bob", "user", "same uid, other persona", uid=first.uid))


def test_unknown_or_foreign_thread_is_rejected(store: SqlStore) -> None:
    bobs = store.create_thread("bob", title="bob side")
    with pytest.raises(NotFoundError, match="has no thread"):
        store.append(msg(thread=bobs.id))
    with pytest.raises(NotFoundError):
        store.append(msg(thread="nope"))
    assert store.recent("alice") == []


def test_threads_main_and_sub_with_parents(store: SqlStore) -> None:
    main = store.main_thread("alice")
    assert store.main_thread("alice") == main and main.parent is None
    sub = store.create_thread("alice", title="research")
    subsub = store.create_thread("alice", title="deeper", parent=sub.id)
    assert (sub.parent, subsub.parent) == (main.id, sub.id)
    assert [t.id for t in store.threads("alice")] == [main.id, sub.id, subsub.id]
    assert store.threads("nobody") == []
    written = store.append(msg(thread=subsub.id))
    assert written.thread == subsub.id
    assert store.recent("alice", thread=main.id) == []
    assert store.recent("alice", thread=subsub.id) == [written]


def test_recent_and_pulse_messages(store: SqlStore) -> None:
    ids = [store.append(msg(f"m{i}", pulse_id="p" if i % 2 else None, scope=f"s{i}")).id
           for i in range(6)]
    assert [m.id for m in store.recent("alice", limit=3)] == ids[3:]
    assert [m.id for m in store.recent("alice", limit=100)] == ids
    assert [m.id for m in store.pulse_messages("alice", "p")] == [ids[1], ids[3], ids[5]]
    assert store.pulse_messages("alice", "other") == []
    with pytest.raises(InvalidQueryError):
        store.recent("alice", limit=-1)


def test_a_conversation_page_takes_a_whole_number(store: SqlStore) -> None:
    store.append(msg("hello", tags=("conversation",)))
    for odd in (-1, 2.5, "3", None):  # the number is written into the statement
        with pytest.raises(InvalidQueryError, match="whole number"):
            store.conversation_before("alice", before=None, limit=odd)  # type: ignore[arg-type]
    assert [m.content for m in store.conversation_before("alice", before=None, limit=1)] == [
        "hello"]


def test_ids_follow_write_order(store: SqlStore) -> None:
    ids = [store.append(msg(f"m{i}", persona=("alice", "bob")[i % 2])).id for i in range(8)]
    assert ids == sorted(ids) and len(set(ids)) == 8


def test_iter_messages_pages_through_everything_in_order(store: SqlStore) -> None:
    ids = [store.append(msg(f"m{i}")).id for i in range(1203)]
    store.append(msg("other", persona="bob"))
    assert [m.id for m in store.iter_messages("alice")] == ids


def test_delete_persona_removes_messages_threads_and_search_rows(store: SqlStore) -> None:
    store.append(msg("searchable text", tags=(CONVERSATION_TAG,)))
    store.create_thread("alice", title="t")
    kept = store.append(msg("searchable text", persona="bob"))
    assert store.delete_persona("alice") == 1
    assert store.recent("alice") == [] and store.threads("alice") == []
    assert store.history("alice") == [] and store.search("alice", "searchable") == []
    assert [h.message.id for h in store.search("bob", "searchable")] == [kept.id]
    assert store.delete_persona("alice") == 0
    assert store.append(msg("again")).thread == store.main_thread("alice").id


def test_reopen_keeps_everything(open_same: Any) -> None:
    first = open_same()
    written = first.append(msg("persisted", tags=("k",), pulse_id="p"))
    first.close()
    assert open_same().recent("alice") == [written]


def test_open_store_picks_sqlite_for_paths(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "memory.db"
    store = open_store(target)
    try:
        assert isinstance(store, SQLiteStore) and target.exists()
        store.append(msg())
    finally:
        store.close()
    with sqlite3.connect(target) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_open_store_on_a_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(MemoryStoreError, match="is a directory"):
        open_store(tmp_path)


def test_sub_thread_needs_a_known_parent_of_the_same_persona(store: SqlStore) -> None:
    bobs = store.create_thread("bob", title="bob's")
    with pytest.raises(NotFoundError, match="has no thread"):
        store.create_thread("alice", title="x", parent=bobs.id)
    with pytest.raises(NotFoundError):
        store.create_thread("alice", title="x", parent="alice:nope")
    with pytest.raises(InvalidMessageError, match="title"):
        store.create_thread("alice", title="")
    assert [t.title for t in store.threads("alice")] == []


def test_close_is_idempotent_and_later_use_is_a_store_error(open_same: Any) -> None:
    store = open_same()
    store.append(msg())
    store.close()
    store.close()
    with pytest.raises(MemoryStoreError):
        store.recent("alice")
