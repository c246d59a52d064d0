"""PostgreSQL only: the reads of one statement (pins, short-term memory, plans, call records,
threads, the conversation before an id, a pulse's messages, a page of a persona's
messages) are one round trip each, without
``BEGIN`` and ``COMMIT``, and call records are written by one statement per chunk. Round
trips are counted in libpq's own trace of the connection: every ``Sync`` (extended
protocol) or ``Query`` (simple protocol) the client sends waits for the server's answer."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from saimemory import NewMessage
from saimemory.calls import CallRecord
from tests.saimemory.conftest import POSTGRES_DSN
from tests.saimemory.test_mem_plans import new_plan

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set"),
]


class Traced:
    """The frontend messages a store's connection sends while traced."""

    def __init__(self, store: Any, path: Path) -> None:
        self._store, self._path = store, path

    def __call__(self, work: Callable[[], object]) -> list[str]:
        from psycopg import pq

        with self._path.open("w") as out:
            conn = self._store._conn.pgconn
            conn.trace(out.fileno())
            conn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
            try:
                work()
            finally:
                conn.untrace()
        return [line for line in self._path.read_text().splitlines() if line.startswith("F")]


@pytest.fixture
def traced(pg: tuple[Any, str], tmp_path: Path) -> Iterator[Traced]:
    yield Traced(pg[0], tmp_path / "trace.txt")


def round_trips(sent: list[str]) -> int:
    return sum(bool(re.match(r"F\t\d+\t(Sync|Query)\b", line)) for line in sent)


def test_one_statement_reads_are_one_round_trip_each(pg: tuple[Any, str], traced: Traced) -> None:
    store, _ = pg
    store.append(NewMessage("alice", "user", "hello"))
    store.pin("alice", "tea")
    store.save_short_term("alice", "likes tea", 1)
    store.record_calls([CallRecord("alice", "model", "m", "ok")])
    store.append(NewMessage("alice", "assistant", "noted", pulse_id="pulse-1"))
    store.save_plan(new_plan("p1", "alice"))
    reads: dict[str, Callable[[], object]] = {
        "pins": lambda: store.pins("alice"),
        "short_term": lambda: store.short_term("alice"),
        "current_plan": lambda: store.current_plan("alice"),
        "call_records": lambda: store.call_records("alice"),
        "threads": lambda: store.threads("alice"),
        "main_thread": lambda: store.main_thread("alice"),
        "conversation_before": lambda: store.conversation_before("alice", before=None),
        "pulse_messages": lambda: store.pulse_messages("alice", "pulse-1"),
        "get_plan": lambda: store.get_plan("alice", "p1"),
        "list_plans": lambda: store.list_plans("alice"),
        "iter_messages (a page)": lambda: list(store.iter_messages("alice")),
    }
    for name, read in reads.items():
        sent = traced(read)
        assert round_trips(sent) == 1, (name, sent)
        assert not any("BEGIN" in line or "COMMIT" in line for line in sent), (name, sent)
    assert [pin.text for pin in store.pins("alice")] == ["tea"]
    short_term = store.short_term("alice")
    assert short_term is not None and short_term.text == "likes tea"
    assert [record.name for record in store.call_records("alice")] == ["m"]
    assert [m.content for m in store.pulse_messages("alice", "pulse-1")] == ["noted"]
    assert store.get_plan("alice", "p1").title == "Outline the game"
    assert [plan.id for plan in store.list_plans("alice")] == ["p1"]
    assert [m.content for m in store.iter_messages("alice")] == ["hello", "noted"]


def test_a_pulse_of_call_records_is_one_insert(pg: tuple[Any, str], traced: Traced) -> None:
    store, _ = pg
    records = [CallRecord("alice", "model", f"m{i}", "ok") for i in range(4)]
    sent = traced(lambda: store.record_calls(records))
    inserts = [line for line in sent if "INSERT INTO call_records" in line]
    assert len(inserts) == 1, sent
    assert round_trips(sent) == 1  # BEGIN, the persona's lock, the insert, COMMIT: one query
    assert [record.name for record in store.call_records("alice")] == [r.name for r in records]


def test_a_second_statement_in_a_read_of_one_is_refused(pg: tuple[Any, str]) -> None:
    store, _ = pg
    with store._read_one() as tx:
        assert tx.fetch("SELECT 1") == [(1,)]
        with pytest.raises(AssertionError, match="second"):
            tx.fetch("SELECT 2")
    with store._read_one() as tx, pytest.raises(AssertionError, match="cannot write"):
        tx.run("DELETE FROM pins")



def test_a_search_commits_with_its_last_read(pg: tuple[Any, str], traced: Traced) -> None:
    """A search reads in a transaction of its own (one snapshot); its last read, the rows
    of the hits, carries the ``COMMIT`` in the same round trip, in every mode."""
    store, _ = pg
    for text in ("the weather is fine", "rain and weather", "猫が好き", "a walk in the park"):
        store.append(NewMessage("alice", "user", text))
    searches: dict[str, Callable[[], Any]] = {
        "all": lambda: store.search("alice", "weather"),
        "any": lambda: store.search("alice", "what about the weather today", match="any"),
        "short words": lambda: store.search("alice", "猫"),
    }
    for name, search in searches.items():
        found: list[Any] = []
        sent = traced(lambda search=search, found=found: found.extend(search()))
        assert found, name
        last = max(i for i, line in enumerate(sent) if "WHERE m.id IN" in line)
        commit = next(i for i, line in enumerate(sent) if "COMMIT" in line)
        between = sent[last:commit]
        assert last < commit and round_trips(between) == 0, (name, sent)
        assert round_trips(sent[commit:]) == 1, (name, sent)  # the Sync that sends both
        assert store._conn.info.transaction_status == 0, name  # idle: nothing left open
    assert [hit.message.content for hit in store.search("alice", "weather")] == [
        "rain and weather", "the weather is fine"]
    store.append(NewMessage("alice", "user", "after the searches"))  # the connection goes on
    assert store.recent("alice", limit=1)[0].content == "after the searches"


def test_a_search_under_a_libpq_without_pipelines_commits_on_its_own(
    pg: tuple[Any, str], traced: Traced, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    store, _ = pg
    store.append(NewMessage("alice", "user", "the weather is fine"))
    monkeypatch.setattr(psycopg.Pipeline, "is_supported", classmethod(lambda cls: False))
    found: list[Any] = []
    sent = traced(lambda: found.extend(store.search("alice", "weather")))
    assert [hit.message.content for hit in found] == ["the weather is fine"]
    last = max(i for i, line in enumerate(sent) if "WHERE m.id IN" in line)
    commit = next(i for i, line in enumerate(sent) if "COMMIT" in line)
    assert last < commit and round_trips(sent[last:commit]) == 1, sent  # one after another
    assert store._conn.info.transaction_status == 0  # committed: nothing left open
