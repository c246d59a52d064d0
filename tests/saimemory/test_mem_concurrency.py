"""Concurrent writers: two processes (and two threads) writing for one persona lose nothing."""

from __future__ import annotations

import multiprocessing
import threading
from multiprocessing.synchronize import Barrier

from saimemory import CONVERSATION_TAG, HistoryBudget, NewMessage
from saimemory.sqlbase import SqlStore
from tests.saimemory.conftest import StoreSpec

PER_WRITER = 150


def write_many(spec: StoreSpec, writer: str, start: Barrier) -> None:
    """One writer process: PER_WRITER conversation messages, each in its own transaction."""
    store = spec.open()
    try:
        start.wait(timeout=60)
        for i in range(PER_WRITER):
            store.append(NewMessage("alice", "user", f"{writer}-{i}", pulse_id=f"{writer}-pulse",
                                    tags=(CONVERSATION_TAG,)))
    finally:
        store.close()


def check_nothing_lost(store: SqlStore, writers: list[str]) -> None:
    everything = list(store.iter_messages("alice"))
    assert len(everything) == PER_WRITER * len(writers)
    ids = [m.id for m in everything]
    assert ids == sorted(set(ids))
    for writer in writers:
        own = [int(m.content.split("-")[1]) for m in everything if m.content.startswith(writer)]
        assert own == list(range(PER_WRITER))
        assert len(store.pulse_messages("alice", f"{writer}-pulse")) == PER_WRITER
    latest = store.history("alice", budget=HistoryBudget(max_messages=5))
    assert [m.id for m in latest] == ids[-5:]


def test_two_processes_write_for_one_persona(spec: StoreSpec) -> None:
    """Nothing lost, and a reader never sees an id that a later read shows a gap before."""
    spec.open().close()  # create the schema before the race
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(3)
    workers = [ctx.Process(target=write_many, args=(spec, name, start)) for name in ("a", "b")]
    for worker in workers:
        worker.start()
    reader = spec.open()
    snapshots: list[list[int]] = []
    try:
        start.wait(timeout=60)
        while any(worker.is_alive() for worker in workers):
            snapshots.append([m.id for m in reader.recent("alice", limit=10_000)])
        for worker in workers:
            worker.join(timeout=120)
        assert [w.exitcode for w in workers] == [0, 0]
        check_nothing_lost(reader, ["a", "b"])
        final = [m.id for m in reader.iter_messages("alice")]
    finally:
        reader.close()
    assert snapshots, "the reader should have read while the writers ran"
    for seen in snapshots:
        assert seen == [i for i in final if seen and i <= seen[-1]]


def test_two_processes_opening_a_new_store_at_once(spec: StoreSpec) -> None:
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(2)
    workers = [ctx.Process(target=write_many, args=(spec, name, start)) for name in ("c", "d")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [w.exitcode for w in workers] == [0, 0]
    store = spec.open()
    try:
        check_nothing_lost(store, ["c", "d"])
    finally:
        store.close()


def test_threads_share_one_store_object(store: SqlStore) -> None:
    errors: list[BaseException] = []

    def run(writer: str) -> None:
        try:
            for i in range(PER_WRITER):
                store.append(NewMessage("alice", "user", f"{writer}-{i}",
                                        pulse_id=f"{writer}-pulse", tags=(CONVERSATION_TAG,)))
                store.history("alice", pulse_id=f"{writer}-pulse")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(name,)) for name in ("x", "y")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    check_nothing_lost(store, ["x", "y"])
