"""``main_context``: history, pins and short-term memory as the three reads give them (every
backend), in one round trip on PostgreSQL (its three statements pipelined), which also
survives a connection lost between calls."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from saimemory import CONVERSATION_TAG, HistoryBudget, NewMessage, open_store
from saimemory.base import MainContext
from saimemory.sqlbase import SqlStore
from tests.saimemory.conftest import POSTGRES_DSN
from tests.saimemory.test_mem_pg_round_trips import Traced, round_trips
from tests.saimemory.test_mem_postgres import dsn, schema, terminate

__all__ = ["schema"]  # the fixture, shared


def fill(store: SqlStore) -> str:
    """Two earlier pulses, a current one with a sub-scope and a sub-thread, pins and a
    summary; the current pulse's id."""
    for i in range(3):
        pulse = f"p{i}"
        store.append_many([
            NewMessage("aoi", "user", f"question {i}", pulse_id=pulse, tags=(CONVERSATION_TAG,)),
            NewMessage("aoi", "assistant", f"step {i}", pulse_id=pulse, playbook="pb", node="n"),
            NewMessage("aoi", "assistant", f"inner {i}", pulse_id=pulse, scope="sub"),
            NewMessage("aoi", "assistant", f"answer {i}", pulse_id=pulse,
                       tags=(CONVERSATION_TAG, "mood")),
        ])
    side = store.create_thread("aoi", title="side")
    store.append(NewMessage("aoi", "user", "aside", thread=side.id, pulse_id="p2",
                            tags=(CONVERSATION_TAG,)))
    store.pin("aoi", "tea")
    store.pin("aoi", "the garden")
    store.save_short_term("aoi", "we talked", 2)
    return "p2"


CASES: list[dict[str, Any]] = [
    {}, {"pulse_id": "p2"}, {"pulse_id": "p2", "scope": "sub"},
    {"pulse_id": "p2", "budget": HistoryBudget(max_messages=1)},
    {"pulse_id": "p2", "budget": HistoryBudget(max_messages=200)},  # beyond one page
    {"pulse_id": "p2", "budget": HistoryBudget(max_messages=5, max_chars=4)},
    {"pulse_id": "nope"},
]


def test_it_is_the_three_reads(store: SqlStore) -> None:
    fill(store)
    side = next(t.id for t in store.threads("aoi") if t.title == "side")
    for case in [*CASES, {"pulse_id": "p2", "thread": side}]:
        got = store.main_context("aoi", **case)
        assert got == MainContext(store.history("aoi", **case), store.pins("aoi"),
                                  store.short_term("aoi")), case
        assert got.history, case
    assert store.main_context("ken") == MainContext([], [], None)  # a persona of nothing
    without = store.main_context("aoi", pulse_id="p2", short_term=False)
    assert without == MainContext(store.history("aoi", pulse_id="p2"), store.pins("aoi"), None)
    assert store.short_term("aoi") is not None  # there was one: it was not read


@pytest.mark.parametrize("case", CASES[:4], ids=str)
@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_postgres_reads_it_in_one_round_trip(
    pg: tuple[Any, str], tmp_path: Path, case: dict[str, Any]
) -> None:
    store = pg[0]
    fill(store)
    expected = MainContext(store.history("aoi", **case), store.pins("aoi"),
                           store.short_term("aoi"))
    got: list[MainContext] = []
    for _ in range(6):  # prepared by psycopg from the sixth on: still one round trip
        sent = Traced(store, tmp_path / "trace.txt")(
            lambda: got.append(store.main_context("aoi", **case)))
        assert round_trips(sent) == 1, sent
    assert got == [expected] * 6


@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_postgres_reopens_a_connection_lost_between_calls(schema: str) -> None:
    name = f"sea_{uuid.uuid4().hex[:12]}"
    store = open_store(dsn(schema, application_name=name))
    try:
        assert isinstance(store, SqlStore)
        fill(store)
        before = store.main_context("aoi", pulse_id="p2")
        assert terminate(name) == 1
        assert store.main_context("aoi", pulse_id="p2") == before
    finally:
        store.close()


@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_postgres_reads_it_one_by_one_under_a_libpq_without_pipelines(
    pg: tuple[Any, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    store = pg[0]
    fill(store)
    expected = store.main_context("aoi", pulse_id="p2")
    monkeypatch.setattr(psycopg.Pipeline, "is_supported", classmethod(lambda cls: False))
    got: list[MainContext] = []
    sent = Traced(store, tmp_path / "trace.txt")(
        lambda: got.append(store.main_context("aoi", pulse_id="p2")))
    assert round_trips(sent) == 3
    assert got == [expected]


@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_postgres_sends_no_short_term_read_when_it_is_not_wanted(
    pg: tuple[Any, str], tmp_path: Path
) -> None:
    store = pg[0]
    fill(store)
    sent = Traced(store, tmp_path / "trace.txt")(
        lambda: store.main_context("aoi", pulse_id="p2", short_term=False))
    assert round_trips(sent) == 1
    assert not [line for line in sent if "short_term_memory" in line]
    sent = Traced(store, tmp_path / "trace.txt")(
        lambda: store.main_context("aoi", pulse_id="p2"))
    assert [line for line in sent if "short_term_memory" in line]
