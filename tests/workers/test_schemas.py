"""Queues in two schemas of one database work side by side: every object of a queue lives
in its schema (the connections' search path is that schema alone), so a procrastinate
installed elsewhere in the database (``public``) does not make its functions ambiguous, and
a command that only reads creates nothing (PostgreSQL, the workers extra)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sea.queue import PulseQueue
from sea.queue.db import QueueDsn
from tests.workers.conftest import DSN, drop_schema
from tests.workers.test_queue import AOI, FAST, _until, _with_worker

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]

SCRIPT = {"responses": {"sub_router_user.decide": [{"playbook": "basic_chat", "reason": "hi"}],
                        "sub_speak.compose": ["Hello, Aoi here."]}}


@pytest.fixture
def schemas() -> Iterator[list[str]]:
    """Three fresh schema names (dropped afterwards)."""
    names = [f"q_{uuid.uuid4().hex[:10]}" for _ in range(3)]
    yield names
    for name in names:
        drop_schema(name)


def dsn_of(schema: str) -> str:
    assert DSN is not None
    return f"{DSN}{'&' if '?' in DSN else '?'}schema={schema}"


def rows(sql: str, *params: Any) -> list[tuple[Any, ...]]:
    import psycopg

    assert DSN is not None
    with psycopg.connect(DSN, autocommit=True) as conn:
        return list(conn.execute(sql, params).fetchall())


def test_the_search_path_is_the_queue_s_schema_alone() -> None:
    assert QueueDsn("postgresql://h/db?schema=alt").options == "-c search_path=alt"


def test_two_schemas_in_one_database_run_their_pulses_side_by_side(
        schemas: list[str], tmp_path: Path) -> None:
    if not rows("SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = 'public' AND p.proname = 'procrastinate_finish_job_v1'"):
        # a queue in public is what made a worker's functions ambiguous; it is not put
        # there by this test (public is shared): without it the test proves less
        print("public holds no procrastinate: the ambiguity case is not exercised")

    async def work(queue: PulseQueue) -> Any:
        pulse = await queue.submit(AOI, "meta_user", "hi")
        return await _until(queue, pulse, "done", "failed")

    for schema in schemas[:2]:
        record = asyncio.run(_with_worker(dsn_of(schema), tmp_path, SCRIPT, work, FAST))
        assert record.status == "done", record.error
        assert record.result["spoken"] == ["Hello, Aoi here."]
        jobs = rows(f'SELECT status::text FROM "{schema}".procrastinate_jobs')
        assert jobs == []  # the worker recorded the job's end (a successful job is deleted)
        functions = rows("SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON "
                         "n.oid = p.pronamespace WHERE n.nspname = %s AND p.proname = "
                         "'procrastinate_finish_job_v1'", schema)
        assert functions == [(1,)]


def test_commands_that_only_read_create_nothing(schemas: list[str], tmp_path: Path) -> None:
    fresh = schemas[2]
    env = {**os.environ, "SEA_HOME": str(tmp_path / "home")}
    root = Path(__file__).resolve().parents[2]
    for argv in (["pulses"], ["schedule", "list"], ["schedule", "remove", "abc"],
                 ["pulse", "show", "abc"]):
        done = subprocess.run([sys.executable, "-m", "sea", *argv, "--db", dsn_of(fresh)],
                              capture_output=True, text=True, env=env, cwd=root, timeout=120,
                              check=False)
        assert "Traceback" not in done.stderr, done.stderr
        assert f"no pulse queue in schema '{fresh}'" in done.stderr, done.stderr
    assert done.returncode == 2  # sea pulse show: no queue, so no such pulse
    assert rows("SELECT 1 FROM pg_namespace WHERE nspname = %s", fresh) == []
