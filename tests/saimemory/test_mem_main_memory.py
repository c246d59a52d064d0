"""Migration 5 on every backend: pinned items (at most five), short-term memory, the cut
conversation a summary reads, and call records; a store of version 4 gains them."""

from __future__ import annotations

from datetime import timedelta

import pytest

from saimemory import CONVERSATION_TAG, NewMessage
from saimemory.call_rows import ROWS_PER_INSERT
from saimemory.calls import CallRecord
from saimemory.errors import InvalidMessageError, MemoryStoreError, PinLimitError
from saimemory.migrations import POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS
from saimemory.pins import MAX_PINS
from saimemory.sqlbase import SqlStore
from tests.saimemory.conftest import StoreFactory, StoreSpec

MAIN_MEMORY_VERSION = 5


def test_both_backends_know_migration_5() -> None:
    for known in (SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS):
        assert known[MAIN_MEMORY_VERSION - 1].version == MAIN_MEMORY_VERSION
        assert known[MAIN_MEMORY_VERSION - 1].name == (
            "call records, pinned items and short-term memory"
        )


def test_pins_keep_order_refuse_a_sixth_and_repeat_none(store: SqlStore) -> None:
    made = [store.pin("alice", f"  fact {i}  ") for i in range(MAX_PINS)]
    assert [pin.text for pin in store.pins("alice")] == [f"fact {i}" for i in range(MAX_PINS)]
    assert store.pin("alice", "fact 2") == made[2]  # the same text: the same pin
    with pytest.raises(PinLimitError, match="already keeps 5 pinned items"):
        store.pin("alice", "one too many")
    assert len(store.pins("alice")) == MAX_PINS
    assert store.pins("bob") == []
    assert store.unpin("alice", made[0].id) is True
    assert store.unpin("alice", made[0].id) is False
    assert store.unpin("bob", made[1].id) is False  # someone else's pin
    assert store.pin("alice", "room again").text == "room again"


@pytest.mark.parametrize("text", ["", "   ", "x" * 501, "nul\x00"])
def test_a_pin_the_store_cannot_keep_is_refused(store: SqlStore, text: str) -> None:
    with pytest.raises(InvalidMessageError):
        store.pin("alice", text)
    assert store.pins("alice") == []


def test_short_term_memory_is_replaced_whole(store: SqlStore) -> None:
    assert store.short_term("alice") is None
    store.save_short_term("alice", "They met.", 4)
    saved = store.save_short_term("alice", "They met; Ken likes tea.", 9)
    assert store.short_term("alice") == saved
    assert (saved.text, saved.through_id) == ("They met; Ken likes tea.", 9)
    with pytest.raises(InvalidMessageError):
        store.save_short_term("alice", "x", -1)


def _conversation(store: SqlStore, texts: list[str], pulse: str) -> list[int]:
    return [
        store.append(NewMessage("alice", "user", text, pulse_id=pulse,
                                tags=(CONVERSATION_TAG,))).id
        for text in texts
    ]


def test_conversation_before_reads_the_newest_cut_messages_oldest_first(
    store: SqlStore,
) -> None:
    ids = _conversation(store, ["a", "b", "c", "d", "e"], "p1")
    store.append(NewMessage("alice", "user", "not conversation", pulse_id="p1"))
    now = _conversation(store, ["this pulse"], "p2")
    got = store.conversation_before("alice", before=ids[3], limit=2)
    assert [m.content for m in got] == ["b", "c"]
    got = store.conversation_before("alice", before=ids[3], after=ids[1], limit=10)
    assert [m.content for m in got] == ["c"]
    every = store.conversation_before("alice", before=None, limit=10, exclude_pulse="p2")
    assert [m.content for m in every] == ["a", "b", "c", "d", "e"]
    assert now[0] not in [m.id for m in every]


def test_call_records_round_trip_and_filter(store: SqlStore) -> None:
    model = CallRecord("alice", "model", "gpt-x", "ok", pulse_id="p1", playbook="pb",
                       node="n", pattern="base_main", model_kind="light", latency_s=0.25,
                       tokens_in=100, tokens_out=20, retries=1, cost=0.0012, fallback=True)
    tool = CallRecord("alice", "tool", "memory_search", "error", pulse_id="p1", playbook="pb",
                      node="t", latency_s=0.01, error="boom\x00" + "x" * 3000)
    store.record_calls([model, tool])
    store.record_calls([CallRecord("bob", "model", "local", "ok")])
    got = store.call_records("alice")
    assert [r.kind for r in got] == ["model", "tool"]
    first = got[0]
    assert (first.name, first.pattern, first.model_kind, first.fallback) == (
        "gpt-x", "base_main", "light", True)
    assert (first.tokens_in, first.tokens_out, first.retries) == (100, 20, 1)
    assert first.cost == pytest.approx(0.0012) and first.latency_s == pytest.approx(0.25)
    assert first.created_at is not None and first.id is not None
    assert got[1].error is not None and len(got[1].error) == 2000 and "\x00" not in got[1].error
    assert len(store.call_records()) == 3
    assert [r.persona for r in store.call_records(pulse_id="p1")] == ["alice", "alice"]
    later = first.created_at + timedelta(hours=1)
    assert store.call_records("alice", since=later) == []
    assert len(store.call_records("alice", since=first.created_at)) == 2


def test_many_call_records_are_kept_in_order_over_several_statements(store: SqlStore) -> None:
    """More records than one statement writes: every one is kept, in the order given; a bad
    one at the end of as many writes none of them."""
    count = 2 * ROWS_PER_INSERT + 3
    records = [CallRecord("alice", "tool", f"t{i}", "ok", tokens_in=i) for i in range(count)]
    store.record_calls(records)
    got = store.call_records("alice")
    assert [(r.name, r.tokens_in) for r in got] == [(f"t{i}", i) for i in range(count)]
    bad = [*records[:count - 1], CallRecord("bob", "tool", "t", "ok", retries=-1)]
    with pytest.raises(InvalidMessageError, match="retries"):
        store.record_calls(bad)
    assert len(store.call_records()) == count


def test_a_bad_call_record_writes_nothing(store: SqlStore) -> None:
    good = CallRecord("alice", "model", "m", "ok")
    bad = CallRecord("alice", "model", "m", "ok", tokens_in=-1)
    with pytest.raises(InvalidMessageError, match="tokens_in"):
        store.record_calls([good, bad])
    with pytest.raises(InvalidMessageError, match="cost"):
        store.record_calls([CallRecord("alice", "model", "m", "ok", cost=float("nan"))])
    with pytest.raises(InvalidMessageError, match="kind"):
        store.record_calls([CallRecord("alice", "other", "m", "ok")])  # type: ignore[arg-type]
    assert store.call_records() == []


def test_a_count_beyond_64_bits_is_refused_not_overflowed(store: SqlStore) -> None:
    for name in ("tokens_in", "tokens_out", "retries"):
        big = CallRecord("alice", "model", "m", "ok", **{name: 2**63})  # type: ignore[arg-type]
        with pytest.raises(InvalidMessageError, match=f"{name} must be an integer from 0 to"):
            store.record_calls([CallRecord("alice", "model", "m", "ok"), big])
    most = CallRecord("alice", "model", "m", "ok", tokens_in=2**63 - 1)
    store.record_calls([most])
    assert [r.tokens_in for r in store.call_records()] == [2**63 - 1]


def test_calls_the_database_refuses_midway_write_none(
    spec: StoreSpec, store: SqlStore
) -> None:
    """A refusal by the database itself (here a rule of the test's), in the last of several
    statements, leaves none of the records, and the store goes on."""
    with store._write("alice") as tx:
        if spec.backend == "sqlite":
            tx.run("CREATE TRIGGER refuse_boom BEFORE INSERT ON call_records"
                   " WHEN new.name = 'boom' BEGIN SELECT RAISE(ABORT, 'boom refused'); END")
        else:
            tx.run("ALTER TABLE call_records ADD CONSTRAINT refuse_boom CHECK (name <> 'boom')")
    records = [CallRecord("alice", "tool", f"t{i}", "ok") for i in range(ROWS_PER_INSERT + 3)]
    with pytest.raises(MemoryStoreError):
        store.record_calls([*records, CallRecord("alice", "tool", "boom", "ok")])
    assert store.call_records() == []
    store.record_calls(records[:2])
    assert [r.name for r in store.call_records()] == ["t0", "t1"]


def test_deleting_a_persona_removes_its_pins_summary_and_calls(store: SqlStore) -> None:
    store.pin("alice", "tea")
    store.save_short_term("alice", "summary", 1)
    store.record_calls([CallRecord("alice", "model", "m", "ok"),
                        CallRecord("bob", "model", "m", "ok")])
    store.delete_persona("alice")
    assert store.pins("alice") == [] and store.short_term("alice") is None
    assert [r.persona for r in store.call_records()] == ["bob"]


def test_a_store_of_version_4_gains_migration_5(open_same: StoreFactory) -> None:
    first = open_same()
    first.append(NewMessage("alice", "user", "kept across the migration"))
    with first._write("alice") as tx:
        for table in ("call_records", "pins", "short_term_memory"):
            tx.run(f"DROP TABLE {table}")
        tx.run("DELETE FROM schema_migrations WHERE version >= ?", (MAIN_MEMORY_VERSION,))
    assert first.schema_version() == MAIN_MEMORY_VERSION - 1
    first.close()
    store = open_same()
    assert store.schema_version() == store.migrations[-1].version >= MAIN_MEMORY_VERSION
    assert [m.content for m in store.recent("alice")] == ["kept across the migration"]
    assert store.pin("alice", "tea").text == "tea"
    store.record_calls([CallRecord("alice", "tool", "t", "ok")])
    assert len(store.call_records("alice")) == 1


def test_migration_5_applies_again_over_tables_left_behind(open_same: StoreFactory) -> None:
    """A store whose version row was lost while its tables stayed opens (IF NOT EXISTS)."""
    first = open_same()
    first.pin("alice", "tea")
    with first._write("alice") as tx:
        tx.run("DELETE FROM schema_migrations WHERE version >= ?", (MAIN_MEMORY_VERSION,))
    first.close()
    again = open_same()
    assert again.schema_version() == again.migrations[-1].version >= MAIN_MEMORY_VERSION
    assert [pin.text for pin in again.pins("alice")] == ["tea"]


def test_a_read_only_refusal_is_a_store_error() -> None:
    assert issubclass(PinLimitError, MemoryStoreError) and PinLimitError.code == "MEM011"
