"""Each message's line and scope (SAIVerse's ``line_role`` and ``scope``; SQLite's migration
15, PostgreSQL's 19): stored and read back, a history of a later pulse reads only the main
line's committed conversation, a pulse's volatile messages are deleted by ``drop_volatile``,
and an older store's messages are main-line and committed after the upgrade."""

from __future__ import annotations

from pathlib import Path

import pytest

from saimemory import NewMessage
from saimemory.errors import InvalidMessageError
from saimemory.jsonl import message_fields
from saimemory.migrations import SQLITE_MIGRATIONS
from saimemory.records import CONVERSATION_TAG
from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore
from tests.saimemory.older import Version14

TALK = (CONVERSATION_TAG,)


def said(text: str, pulse: str, **line: str) -> NewMessage:
    return NewMessage("aoi", "assistant", text, TALK, pulse_id=pulse, **line)  # type: ignore[arg-type]


def test_lines_are_stored_and_a_later_pulse_reads_only_the_main_committed_line(
    store: SqlStore,
) -> None:
    written = store.append_many([
        said("main", "p1"),
        said("aside", "p1", line_role="sub_line"),
        said("judged", "p1", line_role="meta_judgment", line_scope="discardable"),
        said("scratch", "p1", line_scope="volatile"),
    ])
    assert [(m.line_role, m.line_scope) for m in written] == [
        ("main_line", "committed"), ("sub_line", "committed"),
        ("meta_judgment", "discardable"), ("main_line", "volatile")]
    read = {m.content: (m.line_role, m.line_scope) for m in store.pulse_messages("aoi", "p1")}
    assert read == {m.content: (m.line_role, m.line_scope) for m in written}
    # its own pulse reads them all; a later one the main line's committed messages only
    assert [m.content for m in store.history("aoi", pulse_id="p1")] == [
        "main", "aside", "judged", "scratch"]
    assert [m.content for m in store.history("aoi", pulse_id="p2")] == ["main"]
    assert [m.content for m in store.conversation_before("aoi", before=None)] == ["main"]
    assert message_fields(written[1])["line_role"] == "sub_line"


def test_a_pulse_s_volatile_messages_are_deleted(store: SqlStore) -> None:
    store.append_many([said("scratch 1", "p1", line_scope="volatile"), said("kept", "p1"),
                       said("other pulse's scratch", "p2", line_scope="volatile"),
                       said("scratch 2", "p1", line_scope="volatile")])
    assert store.drop_volatile("aoi", "p1") == 2
    assert [m.content for m in store.recent("aoi")] == ["kept", "other pulse's scratch"]
    assert store.search("aoi", "scratch", limit=10)[0].message.content == \
        "other pulse's scratch"
    assert store.drop_volatile("aoi", "p1") == 0


@pytest.mark.parametrize(("field", "value"), [("line_role", "side"), ("line_scope", "forever")])
def test_an_unknown_line_or_scope_is_refused(store: SqlStore, field: str, value: str) -> None:
    with pytest.raises(InvalidMessageError, match=field):
        store.append(said("x", "p1", **{field: value}))
    assert store.recent("aoi") == []


def test_an_older_store_s_messages_are_main_line_and_committed(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old = Version14(path)
    old.append_many([said("before", "p1"), NewMessage("aoi", "user", "note", pulse_id="p1")])
    old.close()
    store = SQLiteStore(path)
    try:
        assert store.schema_version() == SQLITE_MIGRATIONS[-1].version
        assert [(m.content, m.line_role, m.line_scope) for m in store.recent("aoi")] == [
            ("before", "main_line", "committed"), ("note", "main_line", "committed")]
        assert [m.content for m in store.history("aoi", pulse_id="p2")] == ["before"]
        store.append(said("after", "p2", line_role="sub_line"))
        assert [m.content for m in store.history("aoi", pulse_id="p3")] == ["before"]
    finally:
        store.close()


def test_the_language_spells_the_store_s_lines_and_scopes() -> None:
    from typing import get_args

    from saimemory.records import LINE_ROLES, LINE_SCOPES
    from sea.lang.node_options import LineRole, LineScope

    assert get_args(LineRole) == LINE_ROLES and get_args(LineScope) == LINE_SCOPES
