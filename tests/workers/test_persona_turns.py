"""One pulse at a time per persona: in one runtime (across event loops), and across
processes on one SQLite file or one PostgreSQL schema."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from saimemory import MessageStore, Persona, open_store
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.errors import PersonaBusy
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.host.turns import BusyPolicy
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.workers.conftest import DSN, Spawn, chat_script, drop_schema, needs_postgres

AOI = Persona("aoi", "Aoi", "You are Aoi.")


def _runtime(store: MessageStore, tmp_path: Path, pulses: int, **kwargs: Any) -> Runtime:
    script = json.loads(chat_script(tmp_path / f"s{uuid.uuid4().hex}.json", pulses,
                                    delay=0.02).read_text())
    model = ScriptedChatModel.from_mapping(script)
    return Runtime(RuntimeConfig(store, ModelSet.single(model), library=PlaybookLibrary.bundled([]),
                   checkpoint_path=tmp_path / "checkpoints.sqlite", **kwargs))


def _turns(store: MessageStore, persona: str) -> list[str | None]:
    """The pulse of each stored message, in write order."""
    return [m.pulse_id for m in store.iter_messages(persona)]


def _never_interleaved(pulses: list[str | None]) -> bool:
    """Each pulse's messages are one run (a pulse never resumes after another began)."""
    seen: list[str | None] = []
    for pulse in pulses:
        if seen and seen[-1] == pulse:
            continue
        if pulse in seen:
            return False
        seen.append(pulse)
    return True


def test_pulses_of_one_persona_take_turns_across_loops(store: SQLiteStore,
                                                      tmp_path: Path) -> None:
    """A host's async pulses (its loop) and its sync pulses (the runtime's loop thread)
    wait in one line: the stored turns never interleave."""
    runtime = _runtime(store, tmp_path, 6)
    try:
        synced: list[Any] = []
        thread = threading.Thread(target=lambda: synced.append(
            [runtime.run_pulse(AOI, "meta_user", f"sync {n}") for n in range(2)]))

        async def host() -> list[Any]:
            thread.start()
            return list(await asyncio.gather(
                *(runtime.arun_pulse(AOI, "meta_user", f"async {n}") for n in range(3))))

        results = asyncio.run(host())
        thread.join()
    finally:
        runtime.close()
    assert all(r.status == "ok" for r in [*results, *synced[0]])
    turns = _turns(store, AOI.id)
    assert len(turns) == 10 and _never_interleaved(turns)


def test_other_personas_do_not_wait(store: SQLiteStore, tmp_path: Path) -> None:
    runtime = _runtime(store, tmp_path, 4, when_busy="fail")
    ken = Persona("ken", "Ken", "You are Ken.")

    async def both() -> list[Any]:
        return list(await asyncio.gather(runtime.arun_pulse(AOI, "meta_user", "hi"),
                                         runtime.arun_pulse(ken, "meta_user", "hi")))

    try:
        results = asyncio.run(both())
    finally:
        runtime.close()
    assert [r.status for r in results] == ["ok", "ok"]


async def _holding(runtime: Runtime, persona: str) -> None:
    """Return once a pulse of the runtime holds the persona's turn (however loaded the
    machine is)."""
    while not runtime.turns.busy(persona):
        await asyncio.sleep(0.002)


def test_fail_fast_reports_a_busy_persona_and_stores_nothing(store: SQLiteStore,
                                                            tmp_path: Path) -> None:
    runtime = _runtime(store, tmp_path, 4, when_busy="fail")

    async def both() -> list[Any]:
        first = asyncio.create_task(runtime.arun_pulse(AOI, "meta_user", "first"))
        await _holding(runtime, AOI.id)
        second = await runtime.arun_pulse(AOI, "meta_user", "second")
        return [await first, second]

    try:
        first, second = asyncio.run(both())
    finally:
        runtime.close()
    assert first.status == "ok"
    assert second.status == "error" and second.error is not None
    assert second.error["code"] == PersonaBusy.code == "SEA595"
    assert "persona 'aoi' is busy" in second.error["message"]
    assert store.pulse_messages(AOI.id, second.pulse_id) == []


def test_a_wait_times_out_with_persona_busy(store: SQLiteStore, tmp_path: Path) -> None:
    runtime = _runtime(store, tmp_path, 4, busy_timeout=0.05)

    async def both() -> list[Any]:
        first = asyncio.create_task(runtime.arun_pulse(AOI, "meta_user", "first"))
        await _holding(runtime, AOI.id)
        second = await runtime.arun_pulse(AOI, "meta_user", "second")
        return [await first, second]

    try:
        first, second = asyncio.run(both())
    finally:
        runtime.close()
    assert first.status == "ok"
    assert second.error is not None and second.error["code"] == "SEA595"
    assert "after 0.05s" in second.error["message"]
    assert any(e.kind == "warning" and "waiting for persona" in str(e.to_json())
               for e in second.events)


def test_a_bad_policy_is_refused() -> None:
    from sea.errors import UsageError

    with pytest.raises(UsageError, match="when_busy"):
        BusyPolicy("later")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="busy_timeout"):
        BusyPolicy("wait", -1)




@pytest.fixture
def pg_db() -> Iterator[str]:
    schema = f"turns_{uuid.uuid4().hex[:10]}"
    assert DSN is not None
    separator = "&" if "?" in DSN else "?"
    yield f"{DSN}{separator}schema={schema}"
    drop_schema(schema)


def _processes_take_turns(spawn: Spawn, db: str, tmp_path: Path) -> None:
    """Two `sea run` processes for one persona at once: their turns never interleave;
    a third that will not wait fails with SEA595 and stores nothing. (This process holds
    the persona's lock while the third runs, so how fast processes start does not
    matter.)"""
    script = chat_script(tmp_path / "slow.json", 2, delay=0.1)
    holder = open_store(db)
    lock = holder.persona_lock("aoi")
    assert lock.try_acquire()
    try:
        runs = [spawn("run", "--db", db, "--model", f"scripted:{script}", "--persona", "aoi",
                      "--input", f"run {n}", "--json") for n in range(2)]
        impatient = spawn("run", "--db", db, "--model", f"scripted:{script}", "--persona",
                          "aoi", "--input", "impatient", "--when-busy", "fail", "--json")
        impatient.wait(timeout=120)
    finally:
        lock.release()
        holder.close()
    codes = [p.wait(timeout=120) for p in [*runs, impatient]]
    assert codes[:2] == [0, 0], [p.log.read_text() for p in runs]  # type: ignore[attr-defined]
    assert codes[2] == 1
    assert '"code":"SEA595"' in impatient.log.read_text()  # type: ignore[attr-defined]
    store = open_store(db)
    try:
        messages = list(store.iter_messages("aoi"))
    finally:
        store.close()
    assert [m.content for m in messages if m.role == "user"] in (["run 0", "run 1"],
                                                                ["run 1", "run 0"])
    assert len(messages) == 4 and _never_interleaved([m.pulse_id for m in messages])


def test_two_processes_take_turns_on_sqlite(spawn: Spawn, tmp_path: Path) -> None:
    _processes_take_turns(spawn, str(tmp_path / "memory.sqlite"), tmp_path)


@pytest.mark.postgres
@pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_two_processes_take_turns_on_postgres(spawn: Spawn, pg_db: str, tmp_path: Path) -> None:
    _processes_take_turns(spawn, pg_db, tmp_path)


__all__ = ["needs_postgres"]
