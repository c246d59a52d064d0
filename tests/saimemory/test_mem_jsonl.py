"""Export and import as JSON lines, and append_many (every backend)."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import orjson
import pytest

from saimemory import CONVERSATION_TAG, NewMessage
from saimemory.errors import ImportFormatError, InvalidMessageError
from saimemory.jsonl import export_jsonl, export_lines, import_jsonl
from saimemory.sqlbase import SqlStore

T = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def fill(store: SqlStore) -> None:
    side = store.create_thread("alice", title="research")
    store.append(NewMessage("alice", "user", "こんにちは", tags=(CONVERSATION_TAG,),
                            created_at=T, metadata={"with": ["user"]}))
    store.append(NewMessage("alice", "assistant", "hello", pulse_id="p1", playbook="sub_speak",
                            node="speak", tags=(CONVERSATION_TAG,), created_at=T))
    store.append(NewMessage("alice", "system", "found", pulse_id="p1", scope="sub",
                            thread=side.id, created_at=T))


def test_export_lines_have_the_documented_fields(store: SqlStore) -> None:
    fill(store)
    lines = [orjson.loads(line) for line in export_lines(store, "alice")]
    assert [line["content"] for line in lines] == ["こんにちは", "hello", "found"]
    second = lines[1]
    assert second["role"] == "assistant" and second["created_at"] == "2025-06-01T12:00:00+00:00"
    assert second["tags"] == ["conversation", "pulse:p1", "playbook:sub_speak", "node:speak"]
    assert (second["pulse_id"], second["playbook"], second["node"]) == ("p1", "sub_speak", "speak")
    assert second["thread"] == "alice:main" and lines[0]["metadata"] == {"with": ["user"]}
    assert [line["uid"] for line in lines] == [m.uid for m in store.iter_messages("alice")]
    assert len({line["uid"] for line in lines}) == 3
    assert lines[2]["thread_title"] == "research" and lines[2]["thread_parent"] == "alice:main"


def test_round_trip_into_another_persona(store: SqlStore) -> None:
    fill(store)
    buffer = io.BytesIO()
    assert export_jsonl(store, "alice", buffer) == 3
    imported = import_jsonl(store, buffer.getvalue().splitlines(), persona="bob",
                            allow_system=True)
    assert len(imported.written) == 3 and imported.skipped == 0
    original = list(store.iter_messages("alice"))
    copied = list(store.iter_messages("bob"))
    keys = ("role", "content", "tags", "created_at", "pulse_id", "scope", "playbook", "node",
            "uid")
    assert [[getattr(m, k) for k in keys] for m in copied] == \
        [[getattr(m, k) for k in keys] for m in original]
    assert [dict(m.metadata) for m in copied] == [dict(m.metadata) for m in original]
    side = [t for t in store.threads("bob") if t.title == "research"]
    assert len(side) == 1 and copied[2].thread == side[0].id
    in_side = store.history("bob", pulse_id="p1", scope="sub", thread=side[0].id)
    assert [m.content for m in in_side] == ["found"]
    assert [m.content for m in store.history("bob", pulse_id="p1")] == ["こんにちは", "hello"]


def test_import_into_the_same_persona_after_delete(store: SqlStore) -> None:
    fill(store)
    dump = list(export_lines(store, "alice"))
    before = snapshot(store, "alice")
    store.delete_persona("alice")
    assert len(import_jsonl(store, dump, allow_system=True).written) == 3
    assert snapshot(store, "alice") == before


def snapshot(store: SqlStore, persona: str) -> tuple[list[tuple[str, str, str]], int]:
    """A persona's messages (uid, thread, content) and how many threads it has."""
    messages = [(m.uid, m.thread, m.content) for m in store.iter_messages(persona)]
    return messages, len(store.threads(persona))


@pytest.mark.parametrize("target", ["alice", "bob"])
def test_importing_one_export_twice_writes_it_once(store: SqlStore, target: str) -> None:
    fill(store)
    dump = list(export_lines(store, "alice"))
    first = import_jsonl(store, dump, persona=target, allow_system=True)
    assert (len(first.written), first.skipped) == ((0, 3) if target == "alice" else (3, 0))
    before = snapshot(store, target)
    again = import_jsonl(store, dump, persona=target, allow_system=True)
    assert (again.written, again.skipped) == ([], 3)
    assert snapshot(store, target) == before
    assert before[1] == 2 and len(before[0]) == 3


def test_a_later_export_adds_only_what_is_new_in_the_same_threads(store: SqlStore) -> None:
    fill(store)
    import_jsonl(store, list(export_lines(store, "alice")), persona="bob", allow_system=True)
    side = [t for t in store.threads("alice") if t.title == "research"][0]
    store.append(NewMessage("alice", "user", "more research", thread=side.id, created_at=T))
    store.append(NewMessage("alice", "user", "more talk", tags=(CONVERSATION_TAG,)))
    result = import_jsonl(store, list(export_lines(store, "alice")), persona="bob",
                          allow_system=True)
    assert [m.content for m in result.written] == ["more research", "more talk"]
    assert result.skipped == 3
    bob_side = [t for t in store.threads("bob") if t.title == "research"]
    assert len(bob_side) == 1
    in_side = [m.content for m in store.iter_messages("bob") if m.thread == bob_side[0].id]
    assert in_side == ["found", "more research"]


def test_lines_without_uid_import_once(store: SqlStore) -> None:
    line = (b'{"persona": "a", "role": "user", "content": "by hand", "tags": [], '
            b'"created_at": "2025-01-01T00:00:00Z"}')
    other = line.replace(b"by hand", b"another")
    assert len(import_jsonl(store, [line, other]).written) == 2
    assert import_jsonl(store, [line, other, line]).skipped == 3
    assert [m.content for m in store.iter_messages("a")] == ["by hand", "another"]


def test_a_different_message_under_a_known_uid_is_refused(store: SqlStore) -> None:
    fill(store)
    records = [orjson.loads(line) for line in export_lines(store, "alice")]
    records[1]["content"] = "edited"
    fresh = {**records[0], "uid": "f" * 32, "content": "new one"}
    lines = [orjson.dumps(record) for record in (fresh, records[1])]
    before = snapshot(store, "alice")
    with pytest.raises(InvalidMessageError, match=f"uid '{records[1]['uid']}'") as info:
        import_jsonl(store, lines)
    assert info.value.code == "MEM001"
    assert snapshot(store, "alice") == before


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"{not json", "line 2: not JSON"),
        (b"[1, 2]", "line 2: expected a JSON object"),
        (b'{"persona": "a", "role": "user", "tags": [], "created_at": "2025-01-01T00:00:00Z"}',
         "line 2: missing content"),
        (b'{"persona": "a", "role": "robot", "content": "x", "tags": [], '
         b'"created_at": "2025-01-01T00:00:00Z"}', "line 2: role must be one of"),
        (b'{"persona": "a", "role": "user", "content": "x", "tags": [], '
         b'"created_at": "yesterday"}', "line 2: created_at 'yesterday' is not ISO 8601"),
        (b'{"persona": "a", "role": "user", "content": "x", "tags": [], '
         b'"created_at": "2025-01-01T00:00:00"}', "line 2: created_at must be a timezone-aware"),
        (b'{"persona": "a", "role": "user", "content": "x", "tags": ["pulse:9"], '
         b'"created_at": "2025-01-01T00:00:00Z"}', "line 2: tags .* disagree"),
        (b'{"persona": "a", "role": "user", "content": "x", "tags": "t", '
         b'"created_at": "2025-01-01T00:00:00Z"}', "line 2: tags must be a list"),
        (b'{"persona": "a", "role": "user", "content": "x", "tags": [], "thread": "a:s", '
         b'"thread_parent": "a:main", "thread_title": " ", "created_at": "2025-01-01T00:00:00Z"}',
         "line 2: thread_title must be a non-empty string"),
    ],
)
def test_a_bad_line_writes_nothing(store: SqlStore, line: bytes, problem: str) -> None:
    good = (b'{"persona": "a", "role": "user", "content": "fine", "tags": [], '
            b'"created_at": "2025-01-01T00:00:00Z"}')
    with pytest.raises(ImportFormatError, match=problem) as info:
        import_jsonl(store, [good, line, good])
    assert info.value.code == "MEM005"
    assert store.recent("a") == []


def test_a_bad_uid_is_a_line_error(store: SqlStore) -> None:
    line = (b'{"persona": "a", "role": "user", "content": "x", "tags": [], "uid": "", '
            b'"created_at": "2025-01-01T00:00:00Z"}')
    with pytest.raises(ImportFormatError, match="line 1: uid must be a non-empty string"):
        import_jsonl(store, [line])


def test_append_many_is_all_or_nothing(store: SqlStore) -> None:
    batch = [NewMessage("alice", "user", f"m{i}") for i in range(3)]
    written = store.append_many(batch)
    assert [m.content for m in store.recent("alice")] == ["m0", "m1", "m2"]
    assert [m.id for m in written] == sorted(m.id for m in written)
    with pytest.raises(Exception, match="has no thread"):
        store.append_many([NewMessage("alice", "user", "x"),
                           NewMessage("alice", "user", "y", thread="missing")])
    assert len(store.recent("alice")) == 3
    assert store.append_many([]) == []
