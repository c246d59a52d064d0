"""The ``/v1`` playbook, memory, plan and stats routes of a real ``sea serve`` process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from saimemory.sqlite import SQLiteStore
from sea.cli import main
from sea.engine.plans import PlanService
from tests.serve.server import REPLY, ROOT, Server, start_server
from tests.serve.test_agent_chat_ui import events_of


@pytest.fixture
def server(shared_server: Server) -> Server:
    """The server this test process shares with the modules like this one (conftest)."""
    return shared_server


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as client:
        yield client


def test_playbooks_are_listed_drawn_and_checked(
        http: httpx.Client, server: Server, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    items = {p["name"]: p for p in http.get("/v1/playbooks").json()["items"]}
    assert items["chat"]["source"] == "dir" and items["meta_user"]["source"] == "bundled"
    mermaid = http.get("/v1/playbooks/asking/graph", params={"format": "mermaid"}).text
    monkeypatch.chdir(ROOT)  # `sea graph` in this process, as a shell in the repository runs it
    capsys.readouterr()
    assert main(["graph", "asking", "--dir", str(server.root / "books")]) == 0
    assert mermaid == capsys.readouterr().out
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


TOOLS = '''
from langchain_core.tools import tool


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


TOOLS = [weather]
'''


def test_a_server_with_a_workspace_and_tools_previews_plans_and_checks_calls(
        tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    tools = tmp_path / "weather_tools.py"
    tools.write_text(TOOLS)
    running = start_server(tmp_path / "served", "--workspace", str(workspace),
                           "--tools", str(tools))
    try:
        store = SQLiteStore(running.root / "memory.sqlite")
        try:
            service = PlanService(store, "aoi", workspace)
            plan_id = service.propose("Notes", "write them").plan_id
            assert service.set_action_specs(plan_id, [
                {"kind": "create", "path": "a.md", "content": "a\n"}]).ok
        finally:
            store.close()
        with httpx.Client(base_url=running.url, headers=running.headers, timeout=30) as http:
            preview = http.post(f"/v1/personas/aoi/plans/{plan_id}/preview", json={}).json()
            assert preview["diffs"][0]["path"] == "a.md" and preview["request_id"]
            approved = http.post(f"/v1/personas/aoi/plans/{plan_id}/approve", json={}).json()
            assert approved["approver"] == "dev"  # the dev token's name
            assert http.post(f"/v1/personas/aoi/plans/{plan_id}/execute").json()[
                "overall_success"]
            assert (workspace / "a.md").read_text() == "a\n"
            book = {"name": "w", "description": "Asks the weather.", "start_node": "t",
                    "nodes": [{"id": "t", "type": "tool", "action": "weather",
                               "args": {"town": "Kyoto"}, "next": None}]}
            checked = http.post("/v1/validate", json={"text": orjson.dumps(book).decode()})
            assert not checked.json()["ok"]  # the server's own tool, its arguments known
            assert "city" in checked.text
    finally:
        running.stop()
