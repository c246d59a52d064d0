"""Two ``sea serve`` processes on one PostgreSQL schema, without workers: each runs the
pulses started through it, and the other follows them, cancels them and refuses a second
run of a busy persona, from the database alone."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fleet.conftest import DSN, drop_schema, needs_postgres
from tests.fleet.test_fleet import _check_once_in_order, _client, _follow, _start
from tests.serve.server import LONG, REPLY, Server, start_server

pytestmark = needs_postgres


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Server]]:
    assert DSN is not None
    schema = f"f_{uuid.uuid4().hex[:10]}"
    dsn = f"{DSN}{'&' if '?' in DSN else '?'}schema={schema}"
    root: Path = tmp_path_factory.mktemp("embedded")
    running: list[Server] = []
    try:
        for n in range(2):
            running.append(start_server(root / f"s{n}", "--db", dsn))
        yield running
    finally:
        for server in running:
            server.stop()
        for log in sorted(root.glob("s*/*.log")):
            print(f"--- {log}:\n{log.read_text(errors='replace')[-3000:]}")
        drop_schema(schema)


def test_the_other_server_follows_refuses_and_cancels(servers: list[Server]) -> None:
    first, second = servers
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
