"""Two ``sea serve`` processes on one PostgreSQL schema, without workers: each runs the
pulses started through it, and the other follows them, cancels them and refuses a second
run of a busy persona, from the database alone."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sea.serve.owners import OWNER_SPACE
from tests.fleet.conftest import DSN, drop_schema, needs_postgres
from tests.fleet.test_fleet import _check_once_in_order, _client, _follow, _start
from tests.serve.server import LONG, REPLY, Server, start_server

pytestmark = needs_postgres


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[Server]]]:
    """Two servers on a fresh schema, and its DSN."""
    assert DSN is not None
    schema = f"f_{uuid.uuid4().hex[:10]}"
    dsn = f"{DSN}{'&' if '?' in DSN else '?'}schema={schema}"
    root: Path = tmp_path_factory.mktemp("embedded")
    running: list[Server] = []
    try:
        for n in range(2):
            running.append(start_server(root / f"s{n}", "--db", dsn))
        yield dsn, running
    finally:
        for server in running:
            server.stop()
        for log in sorted(root.glob("s*/*.log")):
            print(f"--- {log}:\n{log.read_text(errors='replace')[-3000:]}")
        drop_schema(schema)


def test_the_other_server_follows_refuses_and_cancels(
        servers: tuple[str, list[Server]]) -> None:
    first, second = servers[1]
    thread, run = _start(first, "chat", "hello")
    events = list(_follow(second, thread, run))
    _check_once_in_order(events)
    assert "".join(e["data"][0]["content"] for e in events if e["event"] == "messages") == REPLY

    thread, run = _start(first, "slow", "tell me everything")
    seen: list[dict[str, Any]] = []
    for event in _follow(second, thread, run):
        seen.append(event)
        if event["event"] == "messages" and len(seen) == 6:
            with _client(second) as http:
                busy = http.post(f"/threads/{thread}/runs", json={
                    "assistant_id": "chat",
                    "input": {"messages": [{"type": "human", "content": "and?"}]}})
                assert busy.status_code == 409, busy.text
                answer = http.post(f"/threads/{thread}/runs/{run}/cancel",
                                   params={"wait": "true"})
                assert answer.json()["status"] == "interrupted"
    _check_once_in_order(seen)
    assert sum(1 for e in seen if e["event"] == "messages") < len(LONG.split())


def test_a_run_of_a_server_that_died_ends_and_frees_its_persona(
        servers: tuple[str, list[Server]], tmp_path: Path) -> None:
    import signal

    from tests.fleet.test_fleet import _rows

    dsn, (first, _) = servers
    doomed = start_server(tmp_path / "doomed", "--db", dsn)
    thread, run = _start(doomed, "slow", "a long story")
    seen: list[dict[str, Any]] = []
    for event in _follow(first, thread, run):
        seen.append(event)
        if event["event"] == "messages" and len(seen) == 6:
            [(owner,)] = _rows(dsn, "SELECT owner FROM sea_run_logs WHERE run_id = %s", [run])
            assert owner and owner.split(":")[1] == str(doomed.process.pid)
            held = _rows(dsn, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                              "AND classid = %s::bigint::oid AND granted", [OWNER_SPACE])
            assert held[0][0] >= 1  # the live server's lock: its run is not taken for dead
            doomed.process.send_signal(signal.SIGKILL)
            doomed.process.wait(10)
    _check_once_in_order([*seen[:-1], {**seen[-1], "event": "end"}])
    assert seen[-1]["event"] == "error" and seen[-1]["data"]["error"] == "SEA596"
    with _client(first) as http:
        assert http.get(f"/threads/{thread}/runs/{run}").json()["status"] == "error"
        again = http.post(f"/threads/{thread}/runs/wait", json={
            "assistant_id": "chat", "input": {"messages": [{"type": "human", "content": "hi"}]}})
        assert again.status_code == 200, again.text
    assert _rows(dsn, "SELECT owner FROM sea_run_logs WHERE run_id = %s", [run]) == [(None,)]
