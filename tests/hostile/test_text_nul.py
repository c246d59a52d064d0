"""NUL characters from outside never reach PostgreSQL or fail a pulse at a later write:
``sea submit`` (and the queue behind it) refuses them with SEA368 naming where they are,
and a tool whose result holds one fails with SEA538, an error the playbook routes
(``error_next``), on SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from saimemory import NewMessage
from saimemory.errors import InvalidMessageError
from saimemory.sqlite import SQLiteStore
from tests.trace.conftest import Sea

DSN = os.environ.get("SEA_TEST_POSTGRES_DSN")
skip_without_postgres = pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")


@pytest.fixture
def sea(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Sea:
    """``sea`` with ``SEA_HOME`` and ``SEA_DB`` pointing into ``tmp_path``."""
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SEA_DB", str(tmp_path / "home" / "memory.sqlite"))
    return Sea(tmp_path, capsys)


@pytest.fixture
def pg_dsn() -> Iterator[str]:
    """A DSN of a fresh PostgreSQL schema (dropped afterwards)."""
    import psycopg

    assert DSN is not None
    schema = f"nul_{uuid.uuid4().hex[:10]}"
    yield f"{DSN}{'&' if '?' in DSN else '?'}schema={schema}"
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def queued(dsn: str) -> list[str]:
    """The ids of the pulses in the queue of ``dsn``."""
    from sea.queue import PulseQueue

    async def ids() -> list[str]:
        async with PulseQueue(dsn) as queue:
            return [record.id for record in await queue.pulses()]

    return asyncio.run(ids())


@pytest.mark.postgres
@skip_without_postgres
def test_sea_submit_refuses_a_nul_in_the_arguments_or_the_persona(sea: Sea, pg_dsn: str) -> None:
    # before: psycopg.errors.UntranslatableCharacter (\u0000 cannot be converted to text)
    # as a traceback
    persona = sea.root / "persona.json"
    persona.write_text('{"id": "zed", "name": "Zed", "system_prompt": "be\\u0000good"}',
                       encoding="utf-8")
    for options, where in (
        (["--args", '{"topic": {"name": "ca\\u0000ts"}}'], "arguments at /topic/name"),
        (["--persona-file", str(persona)], "persona at /system_prompt"),
    ):
        done = sea("submit", "basic_chat", "--input", "hi", "--db", pg_dsn, *options)
        assert done.code == 2, done.err
        assert "Traceback" not in done.err
        assert f"SEA368 error: a NUL character in the pulse's {where}" in done.err
        assert "remove it" in done.err
    assert queued(pg_dsn) == []  # nothing half-queued
    good = sea("submit", "basic_chat", "--input", "hi", "--db", pg_dsn)
    assert good.code == 0, good.err
    assert queued(pg_dsn) == [good.out.strip()]


READER = {
    "name": "read_one",
    "description": "Reads one workspace file and says what it holds.",
    "start_node": "read",
    "nodes": [
        {"id": "read", "type": "tool", "action": "read_file",
         "args": {"path": "notes.txt", "offset": 8190}, "output_key": "file", "next": "say",
         "error_next": "refused"},
        {"id": "say", "type": "speak", "action": "read: {file.content}"},
        {"id": "refused", "type": "speak", "action": "{error.code}: {error.message}"},
    ],
}


def run_reader(sea: Sea, db: str) -> dict[str, object]:
    """``sea run read_one`` on a file with a NUL past the binary probe (so ``read_file``
    returns it), with the store ``db``."""
    workspace = sea.root / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_bytes(b"a" * 9000 + b"\0tail\n")
    books = sea.root / "books"
    books.mkdir()
    (books / "read_one.json").write_bytes(orjson.dumps(READER))
    done = sea("run", "read_one", "--input", "hi", "--workspace", str(workspace),
               "--playbooks", str(books), "--model", sea.script({"default": []}),
               "--db", db, "--json")
    assert done.code == 0, done.err
    assert "Traceback" not in done.err
    result: dict[str, object] = orjson.loads(done.out)
    return result


def assert_routed(result: dict[str, object]) -> None:
    # before: the speak node failed the pulse (SEA540: memory refused the message (MEM001):
    # content contains a NUL character)
    assert result["status"] == "ok", result["error"]
    (spoken,) = result["spoken"]  # type: ignore[misc]
    assert spoken.startswith("SEA538: tool 'read_file' returned a NUL character (at "
                             "'/content')")


def test_a_nul_in_a_tool_result_is_a_routed_error_on_sqlite(sea: Sea) -> None:
    assert_routed(run_reader(sea, str(sea.root / "memory.sqlite")))


@pytest.mark.postgres
@skip_without_postgres
def test_a_nul_in_a_tool_result_is_a_routed_error_on_postgresql(sea: Sea, pg_dsn: str) -> None:
    assert_routed(run_reader(sea, pg_dsn))


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=[
    pytest.mark.postgres, skip_without_postgres])])
def test_the_store_refuses_nul_content_with_its_own_error(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    # the one guard where text enters the store (held before this change too)
    from saimemory.postgres import PostgresStore

    store = (SQLiteStore(tmp_path / "memory.sqlite") if backend == "sqlite"
             else PostgresStore(request.getfixturevalue("pg_dsn")))
    try:
        with pytest.raises(InvalidMessageError, match="NUL"):
            store.append(NewMessage("aoi", "user", "a\0b"))
        assert store.recent("aoi") == []
    finally:
        store.close()


@pytest.mark.postgres
@skip_without_postgres
def test_an_answer_or_a_schedule_with_a_nul_is_refused_before_the_queue_is_used(
    pg_dsn: str,
) -> None:
    # before: handed to PostgreSQL (jsonb and text cannot hold NUL)
    from saimemory import Persona
    from sea.errors import UsageError
    from sea.queue import PulseQueue

    async def refused() -> list[str]:
        messages = []
        async with PulseQueue(pg_dsn) as queue:
            for attempt in (
                queue.resume("p1", {"choice": ["fine", "no\0pe"]}),
                queue.add_schedule(Persona("aoi", "Aoi", "be\0good"), "basic_chat", 60),
            ):
                with pytest.raises(UsageError) as info:
                    await attempt
                assert info.value.code == "SEA368"
                messages.append(info.value.message)
            assert await queue.schedules() == []
        return messages

    answer, schedule = asyncio.run(refused())
    assert answer.startswith("a NUL character in the pulse's answer at /choice/1:")
    assert schedule.startswith("a NUL character in the pulse's persona at /system_prompt:")
