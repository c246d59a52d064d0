"""Two ``sea serve --workers`` processes and two ``sea worker`` processes on one PostgreSQL
schema: a stream opened on one server follows a pulse started through the other, a cancel
sent through the other server reaches the worker that runs the pulse, and a worker killed
with SIGKILL mid-pulse loses no event: the stream sees every event once, in order, the
continued pulse's events after a second ``metadata`` (attempt 2), and the run ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.fleet.conftest import DSN, drop_schema, needs_postgres
from tests.serve.server import LONG, REPLY, ROOT, Server, start_server

pytestmark = needs_postgres


@dataclass
class Fleet:
    """Two servers, two workers, their schema."""

    dsn: str
    servers: list[Server]
    workers: list[subprocess.Popen[bytes]]
    root: Path


def _rows(dsn: str, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    import psycopg

    from saimemory.postgres import split_schema

    server, schema = split_schema(dsn)
    with psycopg.connect(server, autocommit=True, options=f"-c search_path={schema}") as conn:
        return list(conn.execute(sql, params or []).fetchall())


def _worker(root: Path, dsn: str, n: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SEA_HOME": str(root / "home"), "PYTHONPATH": str(ROOT)}
    log = open(root / f"worker{n}.log", "wb")
    return subprocess.Popen(
        [sys.executable, "-m", "sea", "worker", "--db", dsn, "--model",
         f"scripted:{root / 'script.json'}", "--playbooks", str(root / "books"),
         "--ask-before", "memory_recent", "--stall-timeout", "2", "--heartbeat", "0.4",
         "--tick", "0.3"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    assert DSN is not None
    schema = f"f_{uuid.uuid4().hex[:10]}"
    dsn = f"{DSN}{'&' if '?' in DSN else '?'}schema={schema}"
    root = tmp_path_factory.mktemp("fleet")
    servers: list[Server] = []
    workers: list[subprocess.Popen[bytes]] = []
    try:
        for n in range(2):
            servers.append(start_server(root / f"s{n}", "--db", dsn, "--workers"))
        workers = [_worker(root / "s0", dsn, n) for n in range(2)]
        yield Fleet(dsn, servers, workers, root)
    finally:
        for server in servers:
            server.stop()
        for process in workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in workers:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
        for log in sorted(root.glob("s*/*.log")):
            print(f"--- {log}:\n{log.read_text(errors='replace')[-3000:]}")
        drop_schema(schema)


def _client(server: Server) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers=server.headers, timeout=60)


def _start(server: Server, assistant: str, text: str) -> tuple[str, str]:
    """A new conversation and a background run in it: (thread id, run id)."""
    with _client(server) as http:
        thread = http.post("/threads", json={}).json()["thread_id"]
        run = http.post(f"/threads/{thread}/runs", json={
            "assistant_id": assistant, "stream_mode": ["values", "messages-tuple"],
            "input": {"messages": [{"type": "human", "content": text}]}})
        assert run.status_code == 200, run.text
        return thread, run.json()["run_id"]


def _follow(server: Server, thread: str, run: str, *, last_event_id: str | None = None,
            until: Any = None) -> Iterator[dict[str, Any]]:
    """The run's SSE events on ``server``, as they come."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    with _client(server) as http, http.stream(
            "GET", f"/threads/{thread}/runs/{run}/stream",
            params={"stream_mode": ["values", "messages-tuple"]}, headers=headers) as response:
        assert response.status_code == 200
        block: list[str] = []
        for line in response.iter_lines():
            if line:
                block.append(line)
                continue
            fields = dict(item.split(": ", 1) for item in block if not item.startswith(":"))
            block = []
            if "event" in fields:
                yield {"id": fields["id"], "event": fields["event"],
                       "data": orjson.loads(fields["data"])}


def _order(event_id: str) -> tuple[int, int]:
    seq, _, k = event_id.partition("-")
    return int(seq), int(k)


def _check_once_in_order(events: list[dict[str, Any]]) -> None:
    ids = [_order(event["id"]) for event in events]
    assert ids == sorted(set(ids)), "an event repeated or out of order"
    assert events[0]["event"] == "metadata" and events[-1]["event"] == "end"


def _final_reply(events: list[dict[str, Any]]) -> list[str]:
    values = [event["data"] for event in events if event["event"] == "values"][-1]
    return [m["content"] for m in values["messages"] if m["type"] == "ai"]


def test_a_stream_on_one_server_follows_a_pulse_started_through_the_other(
        fleet: Fleet) -> None:
    first, second = fleet.servers
    thread, run = _start(first, "chat", "hello")
    events = list(_follow(second, thread, run))
    _check_once_in_order(events)
    chunks = "".join(event["data"][0]["content"] for event in events
                     if event["event"] == "messages")
    assert chunks == REPLY and _final_reply(events) == [REPLY]
    with _client(second) as http:
        assert http.get(f"/threads/{thread}/runs/{run}").json()["status"] == "success"
        assert http.get(f"/threads/{thread}").json()["status"] == "idle"
    # a stream rejoined on the first server after an event misses and repeats nothing
    cut = events[3]["id"]
    rest = list(_follow(first, thread, run, last_event_id=cut))
    assert [e["id"] for e in rest] == [e["id"] for e in events[4:]]
    # the pulse ran on a worker, in the conversation's memory thread
    [(status, worker)] = _rows(fleet.dsn, "SELECT status, worker FROM sea_pulses WHERE id = %s",
                               [run])
    assert status == "done" and worker


def test_a_pulse_that_waits_is_answered_through_the_other_server(fleet: Fleet) -> None:
    first, second = fleet.servers
    thread, run = _start(first, "asking", "what do you remember?")
    events = list(_follow(second, thread, run))
    _check_once_in_order(events)
    waiting = [e["data"] for e in events if e["event"] == "values"][-1]["__interrupt__"]
    assert waiting[0]["value"]["sea"]["tool"] == "memory_recent"
    with _client(second) as http:
        inbox = http.get("/v1/approvals").json()["items"]
        assert [item["pulse_id"] for item in inbox] == [run]
        answer = http.post(f"/threads/{thread}/runs/wait", json={
            "assistant_id": "asking", "input": {},
            "command": {"resume": {"decisions": [{"type": "approve"}]}}})
        assert answer.status_code == 200, answer.text
        assert [m["content"] for m in answer.json()["messages"] if m["type"] == "ai"] == [REPLY]
    with _client(first) as http:
        assert http.get("/v1/approvals").json()["items"] == []
        assert http.get(f"/threads/{thread}").json()["status"] == "idle"
    [(status, result)] = _rows(fleet.dsn, "SELECT status, result->>'status' FROM sea_pulses "
                                          "WHERE id = %s", [run])
    assert (status, result) == ("done", "ok")


def test_a_cancel_through_the_other_server_reaches_the_worker(fleet: Fleet) -> None:
    first, second = fleet.servers
    thread, run = _start(first, "slow", "tell me everything")
    events: list[dict[str, Any]] = []
    for event in _follow(first, thread, run):
        events.append(event)
        if event["event"] == "messages" and len(events) == 6:
            with _client(second) as http:
                answer = http.post(f"/threads/{thread}/runs/{run}/cancel",
                                   params={"wait": "true"})
                assert answer.status_code == 200, answer.text
                assert answer.json()["status"] == "interrupted"
    _check_once_in_order(events)
    streamed = sum(1 for event in events if event["event"] == "messages")
    assert streamed < len(LONG.split())
    [(status, code)] = _rows(fleet.dsn, "SELECT status, error->>'code' FROM sea_pulses "
                                        "WHERE id = %s", [run])
    assert (status, code) == ("failed", "SEA590")
    with _client(first) as http:
        assert http.get(f"/threads/{thread}").json()["status"] == "idle"


def test_a_run_still_queued_is_cancelled_in_the_queue(fleet: Fleet) -> None:
    first, second = fleet.servers
    thread, running = _start(first, "slow", "first, a long story")
    with _client(first) as http:  # the persona is busy: this one waits in the queue
        other = http.post("/threads", json={}).json()["thread_id"]
        queued = http.post(f"/threads/{other}/runs", json={
            "assistant_id": "chat", "multitask_strategy": "enqueue",
            "input": {"messages": [{"type": "human", "content": "then this"}]}}).json()["run_id"]
    with _client(second) as http:
        answer = http.post(f"/threads/{other}/runs/{queued}/cancel", params={"wait": "true"})
        assert answer.json()["status"] == "interrupted"
        http.post(f"/threads/{thread}/runs/{running}/cancel", params={"wait": "true"})
    events = list(_follow(second, other, queued))
    assert [e["event"] for e in events] == ["metadata", "values", "end"]
    [(status, code)] = _rows(fleet.dsn, "SELECT status, error->>'code' FROM sea_pulses "
                                        "WHERE id = %s", [queued])
    assert (status, code) == ("failed", "SEA590")
    assert _rows(fleet.dsn, "SELECT status FROM procrastinate_jobs "
                            "WHERE args->>'pulse_id' = %s", [queued]) == [("cancelled",)]


def test_a_worker_killed_mid_pulse_loses_no_event(fleet: Fleet) -> None:
    first, second = fleet.servers
    thread, run = _start(second, "slow", "a long story, please")
    events: list[dict[str, Any]] = []
    killed = None
    started = time.monotonic()
    for event in _follow(first, thread, run):
        events.append(event)
        if killed is None and event["event"] == "messages" and len(events) > 20:
            [(worker,)] = _rows(fleet.dsn, "SELECT worker FROM sea_pulses WHERE id = %s",
                                [run])
            killed = int(worker.rsplit(":", 1)[1])
            os.kill(killed, signal.SIGKILL)
        assert time.monotonic() - started < 90, "the run did not end"
    assert killed is not None
    _check_once_in_order(events)
    attempts = [event["data"]["attempt"] for event in events if event["event"] == "metadata"]
    assert attempts == [1, 2]
    again = next(n for n, e in enumerate(events) if e["event"] == "metadata" and n > 0)
    assert events[again + 1]["event"] == "values"  # the conversation as stored: no cut reply
    assert LONG not in [m["content"] for m in events[again + 1]["data"]["messages"]]
    assert _final_reply(events) == [LONG]
    with _client(second) as http:
        assert http.get(f"/threads/{thread}/runs/{run}").json()["status"] == "success"
    [(status, attempts_n, worker)] = _rows(
        fleet.dsn, "SELECT status, attempts, worker FROM sea_pulses WHERE id = %s", [run])
    assert status == "done" and attempts_n == 2 and not worker.endswith(f":{killed}")
    seqs = [row[0] for row in _rows(fleet.dsn, "SELECT seq FROM sea_run_events "
                                               "WHERE run_id = %s ORDER BY seq", [run])]
    assert seqs == list(range(1, len(seqs) + 1))
    replies = _rows(fleet.dsn, "SELECT count(*) FROM messages WHERE pulse_id = %s "
                               "AND role = 'assistant'", [run])
    assert replies == [(1,)]
