"""Pulse priorities on the workers (PostgreSQL): a persona's queued pulses run by priority,
then in submission order; a user's pulse queued while a scheduled one of its persona runs
makes that one stop at its next node, and it goes on from its checkpoint afterwards (or is
dropped, as the worker's runtime says); nothing either stored is lost."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from saimemory import Persona
from sea.errors import UsageError
from sea.queue import PulseQueue, Worker, WorkerOptions
from tests.trace.conftest import Sea
from tests.workers.conftest import DSN
from tests.workers.test_preemption import Gate, gated_runtime

AOI = Persona("aoi", "Aoi", "You are Aoi.")
FAST = WorkerOptions(concurrency=2, attempts=2, stall_timeout=2, heartbeat=0.5,
                     retry_wait=0.1, tick=0.5)
postgres = pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")


class CountingGate(Gate):
    """The ``hold`` tool, counting its runs."""

    def __init__(self) -> None:
        super().__init__()
        self.runs = 0

    async def hold(self) -> str:
        self.runs += 1
        return await super().hold()


class Reports:
    """The worker's report lines; an event set once a line holds ``marker``."""

    def __init__(self, marker: str) -> None:
        self.lines: list[str] = []
        self.marker = marker
        self.seen = asyncio.Event()

    def __call__(self, line: str) -> None:
        self.lines.append(line)
        if self.marker in line:
            self.seen.set()


class Attempts:
    """A watch of the worker's attempts (as a server's relay follows them): how each ended,
    and whether that was the pulse's last word."""

    def __init__(self) -> None:
        self.ends: list[tuple[str, int, str, bool]] = []

    async def attempt(self, pulse_id: str, attempt: int) -> Any:
        ends = self.ends

        class Ended:
            def __call__(self, event: Any) -> None:
                pass

            async def ended(self, result: Any, final: bool) -> None:
                ends.append((pulse_id, attempt, result.status, final))

        return Ended()

    async def lost(self, pulse_id: str, error: dict[str, Any]) -> None:
        self.ends.append((pulse_id, 0, "lost", True))


Work = Callable[[PulseQueue], Awaitable[Any]]


async def _with_worker(dsn: str, tmp_path: Path, gate: Gate, work: Work,
                       report: Callable[[str], None],
                       *, start: bool = True, watch: Attempts | None = None,
                       **config: Any) -> Any:
    """Run ``work(queue)`` while a worker of this process runs the queue's pulses (with
    ``start`` False, ``work`` gets a function that starts it)."""
    from saimemory.postgres import PostgresStore

    store = PostgresStore(dsn)
    runtime = gated_runtime(store, tmp_path, gate,
                            ["Hello there.", "Hi again.", "Still here.", "Yes?"], dsn,
                            keep_checkpoints=True, **config)
    try:
        async with PulseQueue(dsn) as queue:
            worker = Worker(queue, runtime, FAST, report=report, watch=watch)
            tasks: list[asyncio.Task[None]] = []

            def begin() -> None:
                tasks.append(asyncio.create_task(worker.run(install_signal_handlers=False)))

            if start:
                begin()
            try:
                return await asyncio.wait_for(work(queue) if start else work(begin), 60)
            finally:
                worker.stop()
                await asyncio.gather(*tasks)
    finally:
        runtime.close()
        store.close()


async def _until(queue: PulseQueue, pulse_id: str, *statuses: str) -> Any:
    while (record := await queue.pulse(pulse_id)).status not in statuses:
        await asyncio.sleep(0.05)
    return record


def _texts(dsn: str) -> list[str]:
    from saimemory.postgres import PostgresStore

    store = PostgresStore(dsn)
    try:
        return [m.content for m in store.iter_messages(AOI.id)]
    finally:
        store.close()


@pytest.mark.postgres
@postgres
def test_a_personas_queued_pulses_run_by_priority_then_in_order(
    queue_dsn: str, tmp_path: Path
) -> None:
    submitted = [("scheduled", "first"), ("autonomous", "second"), ("user", "third"),
                 ("autonomous", "fourth")]

    async def work(begin: Callable[[], None]) -> Any:
        async with PulseQueue(queue_dsn) as queue:
            ids = [await queue.submit(AOI, "chat_now", text, priority=priority)  # type: ignore[arg-type]
                   for priority, text in submitted]
            begin()  # the worker starts once all four wait
            return [await _until(queue, pid, "done", "failed") for pid in ids]

    records = asyncio.run(_with_worker(queue_dsn, tmp_path, CountingGate(), work,
                                       Reports("-"), start=False))
    assert [r.priority for r in records] == ["scheduled", "autonomous", "user", "autonomous"]
    by_start = [r.input for r in sorted(records, key=lambda r: r.started_at)]
    assert by_start == ["third", "second", "fourth", "first"]
    spans = sorted((r.started_at, r.ended_at) for r in records)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), "overlap"


@pytest.mark.postgres
@postgres
def test_the_worker_asks_its_watch_only_about_watched_pulses(
    queue_dsn: str, tmp_path: Path
) -> None:
    """A pulse a server follows is watched; the others cost the watch nothing; a row an
    older version queued (it does not say) is asked about, as it was then."""
    watch = Attempts()

    async def work(queue: PulseQueue) -> list[str]:
        ids = [await queue.submit(AOI, "chat_now", "one", watched=True),
               await queue.submit(AOI, "chat_now", "two")]
        async with queue.connection() as conn:  # as an older version queued it
            ids.append(await queue.submit(AOI, "chat_now", "three", conn=conn))
            await conn.execute("UPDATE sea_pulses SET options = options - 'watched' "
                               "WHERE id = %s", [ids[-1]])
        for pid in ids:
            assert (await _until(queue, pid, "done", "failed")).status == "done"
        return ids

    ids = asyncio.run(_with_worker(queue_dsn, tmp_path, CountingGate(), work, Reports("-"),
                                   watch=watch))
    assert watch.ends == [(ids[0], 1, "ok", True), (ids[2], 1, "ok", True)]


async def _preempt(queue: PulseQueue, gate: Gate, report: Reports,
                   ended: tuple[str, ...]) -> tuple[Any, Any]:
    """A scheduled pulse runs until its tool holds; a user's pulse is queued; once the
    worker asked the scheduled one to stop, its tool ends. Both records at their end."""
    auto = await queue.submit(AOI, "auto_work", "", priority="scheduled", watched=True)
    await gate.entered.wait()
    user = await queue.submit(AOI, "chat_now", "Are you there?", watched=True)
    await report.seen.wait()  # the worker saw the user's pulse: stop at the next node
    gate.release.set()
    user_done = await _until(queue, user, "done", "failed")
    return await _until(queue, auto, *ended), user_done



def _preempted_on_a_worker(dsn: str, tmp_path: Path, **config: Any
                           ) -> tuple[Any, Any, CountingGate, Reports, Attempts]:
    """A scheduled pulse preempted by a user's on a worker (:func:`_preempt`), both to
    their end; the gate, the worker's report and what a follower saw."""
    gate, report, watch = CountingGate(), Reports("asked to stop"), Attempts()
    auto, user = asyncio.run(_with_worker(
        dsn, tmp_path, gate,
        lambda queue: _preempt(queue, gate, report, ("done", "failed", "dropped")), report,
        watch=watch, **config))
    return auto, user, gate, report, watch

@pytest.mark.postgres
@postgres
def test_a_user_pulse_preempts_a_running_scheduled_one_which_then_goes_on(
    queue_dsn: str, tmp_path: Path
) -> None:
    auto, user, gate, report, watch = _preempted_on_a_worker(queue_dsn, tmp_path)
    assert user.status == "done", user.error
    # a server following it sees the stop as no end; its next attempt ends it
    assert watch.ends == [(auto.id, 1, "error", False), (user.id, 1, "ok", True),
                          (auto.id, 2, "ok", True)]
    assert auto.status == "done", auto.error
    assert auto.error is None and auto.attempts == 2  # stopped once, went on once
    assert gate.runs == 1  # it went on from its checkpoint: the held node did not run again
    # the user's ran between the two parts of the scheduled one (its row's start is its
    # last part's)
    assert user.started_at < user.ended_at <= auto.started_at < auto.ended_at
    assert any(f"for pulse {user.id}" in line and "preempted" in line for line in report.lines)
    texts = _texts(queue_dsn)
    assert texts.count("auto before") == 1 and texts.count("auto after") == 1
    assert texts.index("auto before") < texts.index("Are you there?") \
        < texts.index("Hello there.") < texts.index("auto after")


@pytest.mark.postgres
@postgres
def test_the_worker_may_drop_the_preempted_pulse(
    queue_dsn: str, tmp_path: Path
) -> None:
    auto, user, _, _, watch = _preempted_on_a_worker(queue_dsn, tmp_path,
                                                    when_preempted="drop")
    assert user.status == "done", user.error
    assert watch.ends[0] == (auto.id, 1, "error", True)  # its end, for a server too
    assert auto.status == "dropped" and auto.ended_at is not None
    assert auto.error["code"] == "SEA597" and user.id in auto.error["message"]
    texts = _texts(queue_dsn)
    assert "auto before" in texts and "Hello there." in texts  # what it stored stays
    assert "auto after" not in texts


@pytest.mark.postgres
@postgres
def test_a_running_pulse_goes_on_when_the_pulse_it_was_to_stop_for_is_cancelled(
    queue_dsn: str, tmp_path: Path
) -> None:
    gate, report, gone = CountingGate(), Reports("asked to stop"), Reports("no longer waits")

    def both(line: str) -> None:
        report(line)
        gone(line)

    async def work(queue: PulseQueue) -> Any:
        auto = await queue.submit(AOI, "auto_work", "", priority="scheduled")
        await gate.entered.wait()
        user = await queue.submit(AOI, "chat_now", "Are you there?")
        await report.seen.wait()
        async with queue.connection() as conn:  # as a server cancels a run still queued
            await conn.execute("UPDATE procrastinate_jobs SET status = 'cancelled' "
                               "WHERE args->>'pulse_id' = %s", [user])
        await gone.seen.wait()
        gate.release.set()
        return await _until(queue, auto, "done", "failed", "dropped", "preempted")

    auto = asyncio.run(_with_worker(queue_dsn, tmp_path, gate, work, both))
    assert auto.status == "done" and auto.attempts == 1  # it did not stop
    assert "auto after" in _texts(queue_dsn)


@pytest.mark.postgres
@postgres
def test_a_schedule_submits_scheduled_pulses_unless_told_otherwise(
    queue_dsn: str
) -> None:
    async def work() -> Any:
        async with PulseQueue(queue_dsn) as queue:
            plain = await queue.add_schedule(AOI, "chat_now", 60)
            eager = await queue.add_schedule(AOI, "chat_now", 60, priority="autonomous")
            return plain, eager, await queue.schedules(persona="aoi")

    plain, eager, listed = asyncio.run(work())
    assert (plain.priority, eager.priority) == ("scheduled", "autonomous")
    assert sorted(s.priority for s in listed) == ["autonomous", "scheduled"]
    assert plain.to_json()["priority"] == "scheduled"


def test_an_unknown_priority_is_refused_before_anything_is_queued() -> None:
    queue = PulseQueue("postgresql://nobody@127.0.0.1:1/none")  # never reached
    with pytest.raises(UsageError, match="priority must be one of user, autonomous, "
                       "scheduled, not 'urgent'") as info:
        asyncio.run(queue.submit(AOI, "chat_now", "hi", priority="urgent"))  # type: ignore[arg-type]
    assert info.value.code == "SEA369"
    with pytest.raises(UsageError) as info:
        asyncio.run(queue.add_schedule(AOI, "chat_now", 60, priority="now"))  # type: ignore[arg-type]
    assert info.value.code == "SEA369"


@pytest.fixture
def sea(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Sea:
    """``sea`` with ``SEA_HOME`` in ``tmp_path``."""
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    return Sea(tmp_path, capsys)


def test_sea_submit_refuses_an_unknown_priority(sea: Sea) -> None:
    with pytest.raises(SystemExit) as info:
        sea("submit", "--priority", "urgent", "--db", "postgresql://nobody@127.0.0.1:1/none")
    assert info.value.code == 2
    assert "argument --priority: invalid choice: 'urgent'" in sea.capsys.readouterr().err


@pytest.mark.postgres
@postgres
def test_the_commands_submit_and_show_priorities(sea: Sea, queue_dsn: str) -> None:
    submitted = sea("submit", "basic_chat", "--input", "hi", "--priority", "autonomous",
                    "--db", queue_dsn, "--json")
    assert submitted.code == 0, submitted.err
    pulse_id = json.loads(submitted.out)["pulse_id"]
    listed = sea("pulses", "--db", queue_dsn, "--json")
    [record] = [json.loads(line) for line in listed.out.splitlines()]
    assert (record["id"], record["priority"], record["status"]) == (pulse_id, "autonomous",
                                                                   "queued")
    assert "autonomous" in sea("pulses", "--db", queue_dsn).out
    shown = sea("pulse", "show", pulse_id, "--db", queue_dsn)
    assert "priority  autonomous" in shown.out
    added = sea("schedule", "add", "meta_auto", "--every", "10m", "--db", queue_dsn)
    assert added.code == 0, added.err
    assert "scheduled" in sea("schedule", "list", "--db", queue_dsn).out


@pytest.mark.postgres
@postgres
def test_a_queue_of_an_older_version_gains_the_priorities(queue_dsn: str) -> None:
    import psycopg

    from sea.queue.db import QueueDsn

    async def submit() -> str:
        async with PulseQueue(queue_dsn) as queue:
            return await queue.submit(AOI, "chat_now", "hi", priority="scheduled")

    older = asyncio.run(submit())
    where = QueueDsn(queue_dsn)
    with psycopg.connect(where.server, options=where.options, autocommit=True) as conn:
        conn.execute("ALTER TABLE sea_pulses DROP COLUMN priority")  # as an older version
        conn.execute("ALTER TABLE sea_schedules DROP COLUMN priority")

    async def reopen() -> Any:
        async with PulseQueue(queue_dsn) as queue:
            newer = await queue.submit(AOI, "chat_now", "hi", priority="autonomous")
            return await queue.pulse(older), await queue.pulse(newer)

    before, after = asyncio.run(reopen())
    assert before.priority == "user"  # a pulse queued before priorities: a person's
    assert after.priority == "autonomous"
