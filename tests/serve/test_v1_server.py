"""The ``/v1`` playbook, memory, plan and stats routes of a real ``sea serve`` process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.serve.server import REPLY, ROOT, Server
from tests.serve.test_agent_chat_ui import events_of


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as client:
        yield client


def test_playbooks_are_listed_drawn_and_checked(http: httpx.Client, server: Server) -> None:
    items = {p["name"]: p for p in http.get("/v1/playbooks").json()["items"]}
    assert items["chat"]["source"] == "dir" and items["meta_user"]["source"] == "bundled"
    mermaid = http.get("/v1/playbooks/asking/graph", params={"format": "mermaid"}).text
    cli = subprocess.run([sys.executable, "-m", "sea", "graph", "asking", "--dir",
                          str(server.root / "books")], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                         check=True)
    assert mermaid == cli.stdout
    graph = http.get("/v1/playbooks/asking/graph").json()
    assert {(e["source"], e["kind"]) for e in graph["edges"]} >= {("look", "next"),
                                                                  ("look", "error")}
    checked = http.post("/v1/validate", json={"text": '{"name": "x"}', "name": "x.json"})
    assert checked.status_code == 200 and not checked.json()["ok"]
    assert all(d["line"] for d in checked.json()["diagnostics"])


def test_memory_stats_and_plans_of_a_served_persona(http: httpx.Client) -> None:
    with http.stream("POST", "/v1/personas/aoi/pulses", json={"input": "remember plums"},
                     headers={"Accept": "text/event-stream"}) as response:
        assert events_of(response.read().decode())[-1]["event"] == "end"
    recent = http.get("/v1/personas/aoi/messages", params={"limit": 2}).json()["items"]
    assert [m["content"] for m in recent] == ["remember plums", REPLY]
    hits = http.get("/v1/personas/aoi/search", params={"q": "plums"}).json()["items"]
    assert hits[0]["message"]["content"] == "remember plums"
    pin = http.post("/v1/personas/aoi/pins", json={"text": "Likes plums."}).json()
    assert http.delete(f"/v1/personas/aoi/pins/{pin['id']}").status_code == 200
    assert http.get("/v1/stats", params={"persona": "aoi"}).json()["calls"] >= 1
    assert http.get("/v1/personas/aoi/plans").json() == {"items": []}
    none = http.post("/v1/personas/aoi/plans/current/preview", json={})
    assert none.status_code == 404  # aoi has no current plan
    assert http.get("/v1/schedules").json()["error"]["code"] == "SEA890"  # a SQLite store
