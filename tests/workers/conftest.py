"""Fixtures for the queue tests: a PostgreSQL schema of their own, scripts, worker processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

DSN = os.environ.get("SEA_TEST_POSTGRES_DSN")
needs_postgres = [
    pytest.mark.postgres,
    pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set"),
]
SEA = [sys.executable, "-m", "sea"]


def drop_schema(schema: str) -> None:
    """Remove a test schema and everything in it."""
    import psycopg

    assert DSN is not None
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def fresh_schema(prefix: str) -> Iterator[str]:
    """A DSN whose ``?schema=`` is new (named ``prefix`` and random letters), dropped once
    the caller is done with it."""
    assert DSN is not None
    schema = f"{prefix}{uuid.uuid4().hex[:10]}"
    separator = "&" if "?" in DSN else "?"
    yield f"{DSN}{separator}schema={schema}"
    drop_schema(schema)


@pytest.fixture
def queue_dsn() -> Iterator[str]:
    """A DSN whose ``?schema=`` is fresh (dropped afterwards)."""
    yield from fresh_schema("q_")


def chat_script(path: Path, pulses: int, *, delay: float = 0.0) -> Path:
    """A script for ``meta_user`` pulses: the router chooses basic_chat, the persona
    answers in five words (``delay`` seconds between streamed words)."""
    script: dict[str, Any] = {
        "responses": {
            "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "chat"}] * pulses,
            "sub_speak.compose": ["Glad to hear from you."] * pulses,
        },
    }
    if delay:
        script["chunk_delay_s"] = delay
    path.write_text(json.dumps(script))
    return path


Spawn = Callable[..., subprocess.Popen[str]]


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """Start ``sea`` commands as processes; any still running at the end are killed."""
    started: list[subprocess.Popen[str]] = []

    def start(*words: str, **kwargs: Any) -> subprocess.Popen[str]:
        env = {**os.environ, "SEA_HOME": str(tmp_path / "home")}
        log = tmp_path / f"process{len(started)}.log"
        with log.open("w") as out:
            process = subprocess.Popen(
                [*SEA, *words], text=True, env=env, stdout=out, stderr=subprocess.STDOUT,
                cwd=Path(__file__).parents[2], **kwargs,
            )
        process.log = log  # type: ignore[attr-defined]
        started.append(process)
        return process

    yield start
    for process in started:
        print(f"--- {' '.join(process.args[3:5])} (pid {process.pid}):")  # type: ignore[index]
        print(process.log.read_text()[-3000:])  # type: ignore[attr-defined]
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
