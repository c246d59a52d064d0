"""The pulse queue and a worker in this process: submit, report, retries, waiting pulses,
schedules (PostgreSQL, the workers extra)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from saimemory import Persona
from sea.chat.scripted import ScriptedChatModel
from sea.engine.limits import Limits
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from sea.queue import PulseQueue, Worker, WorkerOptions, parse_every
from sea.queue.records import IntervalBounds, check_status
from tests.engine.conftest import PLAYBOOKS
from tests.engine.test_runtime import send_mail
from tests.workers.conftest import DSN

AOI = Persona("aoi", "Aoi", "You are Aoi.")
KEN = Persona("ken", "Ken", "You are Ken.")


def test_the_queue_needs_postgres() -> None:
    with pytest.raises(UsageError, match="needs PostgreSQL") as info:
        PulseQueue("memory.sqlite")
    assert info.value.code == "SEA361"


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("30s", 30), ("10m", 600),
                                                ("2h", 7200), ("1d", 86400), ("1.5m", 90)])
def test_intervals(text: str, seconds: float) -> None:
    assert parse_every(text) == seconds


@pytest.mark.parametrize("text", ["", "ten minutes", "0m", "5w", "-1s"])
def test_bad_intervals_are_refused(text: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_every(text)
    assert info.value.code == "SEA363"


def test_bad_statuses_and_options_are_refused() -> None:
    with pytest.raises(UsageError, match="expected one of queued, running"):
        check_status("finished")
    with pytest.raises(UsageError, match="heartbeat"):
        WorkerOptions(heartbeat=40, stall_timeout=30)


Work = Callable[[PulseQueue], Awaitable[Any]]


async def _with_worker(dsn: str, tmp_path: Path, script: dict[str, Any], work: Work,
                       options: WorkerOptions, **runtime: Any) -> Any:
    """Run ``work(queue)`` while a worker of this process runs the queue's pulses."""
    from saimemory.postgres import PostgresStore

    store = PostgresStore(dsn)
    runtime.setdefault("library", PlaybookLibrary.bundled([PLAYBOOKS]))
    made = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping(script)),
                   checkpoint_path=dsn, keep_checkpoints=True, **runtime))
    try:
        async with PulseQueue(dsn) as queue:
            worker = Worker(queue, made, options, report=print)
            running = asyncio.create_task(worker.run(install_signal_handlers=False))
            try:
                return await asyncio.wait_for(work(queue), 60)
            finally:
                worker.stop()
                await running
    finally:
        made.close()
        store.close()


async def _until(queue: PulseQueue, pulse_id: str, *statuses: str) -> Any:
    while (record := await queue.pulse(pulse_id)).status not in statuses:
        await asyncio.sleep(0.05)
    return record


FAST = WorkerOptions(concurrency=2, attempts=2, stall_timeout=2, heartbeat=0.5,
                     retry_wait=0.1, tick=0.1)


@pytest.mark.postgres
@pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_submit_report_and_fail_after_bounded_retries(queue_dsn: str, tmp_path: Path) -> None:
    script = {"responses": {"sub_router_user.decide": [{"playbook": "basic_chat",
                                                        "reason": "hi"}],
                            "sub_speak.compose": ["Hello, Aoi here."]}}

    async def work(queue: PulseQueue) -> Any:
        ok = await queue.submit(AOI, "meta_user", "hi")
        doomed = await queue.submit(KEN, "fails_unrouted", "failing_model")  # no answer
        listed = [(r.persona.id, r.status) for r in await queue.pulses()]
        return (await _until(queue, ok, "done"), await _until(queue, doomed, "failed"), listed,
                await queue.pulses(persona="ken", status=["failed"]))

    ok, doomed, listed, failed = asyncio.run(
        _with_worker(queue_dsn, tmp_path, script, work, FAST))
    assert [who for who, _ in listed] == ["aoi", "ken"]
    assert ok.result["spoken"] == ["Hello, Aoi here."] and ok.error is None
    assert ok.attempts == 1 and ok.ended_at is not None
    assert doomed.attempts == 2  # bounded: --attempts 2
    assert doomed.error["code"] == "SEA522" and "no response left" in doomed.error["message"]
    assert doomed.error["node"] == "failing_model"
    assert [r.id for r in failed] == [doomed.id]
    with pytest.raises(UsageError, match="no submitted pulse") as info:
        asyncio.run(_read(queue_dsn, lambda q: q.pulse("nope")))
    assert info.value.code == "SEA364"


async def _read(dsn: str, read: Work) -> Any:
    async with PulseQueue(dsn) as queue:
        return await read(queue)


@pytest.mark.postgres
@pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_a_waiting_pulse_is_answered_through_the_queue(queue_dsn: str, tmp_path: Path) -> None:
    async def work(queue: PulseQueue) -> Any:
        pulse_id = await queue.submit(AOI, "approval_tool", "bob")
        waiting = await _until(queue, pulse_id, "waiting")
        with pytest.raises(UsageError, match="no submitted pulse"):
            await queue.resume("x" + pulse_id, True)
        await queue.resume(pulse_id, True)
        done = await _until(queue, pulse_id, "done")
        with pytest.raises(UsageError, match="is done, not waiting"):
            await queue.resume(pulse_id, True)
        return waiting, done

    waiting, done = asyncio.run(_with_worker(
        queue_dsn, tmp_path, {}, work, FAST, tools=[send_mail],
        limits=Limits(approval_tools=frozenset({"send_mail"}))))
    assert waiting.result["approval"]["tool"] == "send_mail"
    assert done.result["outputs"]["outcome"] == "sent" and done.status == "done"


@pytest.mark.postgres
@pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_schedules_run_on_the_workers_and_skip_a_busy_persona(queue_dsn: str,
                                                               tmp_path: Path) -> None:
    reflection = {"thought": "Quiet day.", "remember": False, "note": ""}
    script = {"responses": {"meta_auto.reflect": [reflection] * 50}}

    async def work(queue: PulseQueue) -> Any:
        schedule = await queue.add_schedule(AOI, "meta_auto", 0.2,
                                            bounds=IntervalBounds(min_s=0.1))
        while len([r for r in await queue.pulses(persona="aoi") if r.status == "done"]) < 3:
            await asyncio.sleep(0.05)
        from saimemory.postgres import PostgresStore

        other = PostgresStore(queue_dsn)  # another process's pulse holds aoi's turn
        lock = other.persona_lock("aoi")
        for _ in range(200):  # a scheduled pulse may hold the turn this moment: take it after
            if lock.try_acquire():
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("aoi's turn was never free in 10 s")
        try:
            before = len(await queue.pulses(persona="aoi", limit=1000))
            await asyncio.sleep(1.0)
            during = len(await queue.pulses(persona="aoi", limit=1000))
            [busy] = await queue.schedules(persona="aoi")
        finally:
            lock.release()
            other.close()
        await queue.remove_schedule(schedule.id)
        with pytest.raises(UsageError, match="no schedule"):
            await queue.remove_schedule(schedule.id)
        pulses = await queue.pulses(persona="aoi", limit=1000)
        for record in pulses:
            await _until(queue, record.id, "done")
        return before, during, busy, await queue.pulses(persona="aoi", limit=1000)

    before, during, busy, pulses = asyncio.run(
        _with_worker(queue_dsn, tmp_path, script, work, FAST))
    assert during - before <= 1  # at most one was queued as the lock was taken
    assert busy.skipped >= 3 and busy.runs >= 3
    assert all(r.schedule_id == busy.id and r.input == "" for r in pulses)
    spans = sorted((r.started_at, r.ended_at) for r in pulses)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), "overlap"
