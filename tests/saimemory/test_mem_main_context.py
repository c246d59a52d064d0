"""``main_context``: history, pins and short-term memory as the three reads give them (every
backend), in one round trip on PostgreSQL (its three statements pipelined), which also
survives a connection lost between calls."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from saimemory import CONVERSATION_TAG, HistoryBudget, NewMessage, open_store
from saimemory.base import MainContext, MessageStore
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


FOLD_CASE: dict[str, Any] = {"pulse_id": "p2", "budget": HistoryBudget(max_messages=1),
                             "fold": 12}
"""The history keeps ``answer 1``; of the older conversation the summary (through id 2)
covers ``question 0``, not ``answer 0`` and ``question 1``."""


@pytest.mark.parametrize("case", [*CASES[:4], FOLD_CASE], ids=str)
@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_postgres_reads_it_in_one_round_trip(
    pg: tuple[Any, str], tmp_path: Path, case: dict[str, Any]
) -> None:
    """What a summary would fold included (``fold``), which the contract's own
    implementation reads with two more statements."""
    store = pg[0]
    fill(store)
    expected = MessageStore.main_context(store, "aoi", **case)  # the reads one by one
    assert expected.history == store.history("aoi", **{k: case[k] for k in case if k != "fold"})
    if "fold" in case:
        assert expected.cut and [m.content for m in expected.unfolded] == [
            "answer 0", "question 1"]
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


def folded_by_hand(
    store: SqlStore, pulse_id: str | None, budget: HistoryBudget, fold: int
) -> tuple[bool, list[int]]:
    """What ``main_context(fold=…)`` should say was cut, worked out from every older
    conversation message (not from a page of them, nor from a bounded read)."""
    history = store.history("aoi", pulse_id=pulse_id, budget=budget)
    earlier = [m.id for m in history if pulse_id is None or m.pulse_id != pulse_id]
    if not earlier and budget.max_messages > 0:
        return False, []
    older = store.conversation_before("aoi", before=min(earlier) if earlier else None,
                                      limit=10_000, exclude_pulse=pulse_id)
    summary = store.short_term("aoi")
    covered = summary.through_id if summary is not None else 0
    return bool(older), [m.id for m in older if m.id > covered][-fold:]


def test_what_a_summary_would_fold_comes_with_it(store: SqlStore) -> None:
    """Every backend, and PostgreSQL's page that reaches past the history (one round trip)
    as its separate reads would: the newest cut messages the summary does not cover, and
    whether anything was cut, for budgets that cut by count and by characters, within one
    page and beyond it, summaries from none to all, and pulses of every kind."""
    for i in range(24):
        pulse = f"p{i}"
        store.append_many([
            NewMessage("aoi", "user", f"question {i} " + "x" * (i % 5) * 30, pulse_id=pulse,
                       tags=(CONVERSATION_TAG,)),
            NewMessage("aoi", "assistant", f"step {i}", pulse_id=pulse, playbook="pb"),
            NewMessage("aoi", "assistant", f"answer {i}", pulse_id=pulse,
                       tags=(CONVERSATION_TAG,)),
        ])
    side = store.create_thread("aoi", title="side")
    store.append(NewMessage("aoi", "user", "aside", thread=side.id, tags=(CONVERSATION_TAG,)))
    ids = [m.id for m in store.iter_messages("aoi")]
    budgets = [HistoryBudget(max_messages=n, max_chars=chars)
               for n in (0, 1, 5, 64, 65) for chars in (100_000, 200)]
    checked = cut_seen = unfolded_seen = 0
    # summaries through nothing, a question, an answer, the newest answer, a sub-thread's
    for through in (None, ids[9], ids[41], ids[-2], ids[-1]):
        if through is not None:
            store.save_short_term("aoi", "we talked", through)
        for budget in budgets:
            for pulse_id in (None, "p23", "p5", "nope"):
                for fold in (1, 3, 12):
                    got = store.main_context("aoi", pulse_id=pulse_id, budget=budget, fold=fold)
                    case = (through, budget, pulse_id, fold)
                    assert got.history == store.history("aoi", pulse_id=pulse_id,
                                                        budget=budget), case
                    assert (got.cut, [m.id for m in got.unfolded]) == folded_by_hand(
                        store, pulse_id, budget, fold), case
                    checked += 1
                    cut_seen += got.cut
                    unfolded_seen += bool(got.unfolded)
    assert checked == 5 * 10 * 4 * 3
    assert 0 < unfolded_seen < cut_seen < checked  # every outcome was met
    plain = store.main_context("aoi", pulse_id="p23", budget=HistoryBudget(max_messages=1))
    assert (plain.cut, plain.unfolded) == (False, [])  # not asked: not read
    on_side = store.main_context("aoi", pulse_id="p23", thread=side.id, fold=3,
                                 budget=HistoryBudget(max_messages=1))
    assert (on_side.cut, on_side.unfolded) == (False, [])  # a sub-thread has no summary
