"""``/v1/playbooks`` and ``/v1/validate``: listed, shown, drawn, and a posted text checked as
``sea validate`` checks a file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from sea.cli import main
from sea.lang.render import to_mermaid
from tests.serve.server import ROOT
from tests.serve.v1app import App, serving

TYPO = """{
  "name": "typo",
  "description": "A playbook with mistakes.",
  "start_node": "a",
  "nodes": [
    {"id": "a", "type": "pass", "next": "b"},
    {"id": "b", "type": "tool", "action": "memory_recent", "args": {"limit": 1}, "next": "zz"}
  ]
}
"""


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[App]:
    with serving(tmp_path) as app:
        yield app


def test_the_list_names_every_playbook_with_its_source_and_checks(v1: App) -> None:
    items = {p["name"]: p for p in v1.get("/v1/playbooks").json()["items"]}
    assert items["chat"]["source"] == "dir" and items["chat"]["errors"] == 0
    assert items["chat"]["description"] == "Answers the user."
    assert items["meta_user"]["source"] == "bundled"
    assert items["basic_chat"]["router_callable"] and not items["meta_user"]["router_callable"]
    assert items["broken"]["errors"] >= 1 and items["broken"]["description"] == "Goes nowhere."
    assert len(items["chat"]["sha256"]) == 64


def test_a_playbook_is_shown_with_its_text_document_and_located_diagnostics(v1: App) -> None:
    shown = v1.get("/v1/playbooks/broken").json()
    assert orjson.loads(shown["text"]) == shown["document"]
    diagnostic = shown["diagnostics"][0]
    assert diagnostic["severity"] == "error" and diagnostic["node_id"] == "a"
    assert diagnostic["pointer"] == "/nodes/0/next" and diagnostic["line"] >= 1
    assert diagnostic["file"] == "broken"  # the name, never the server's path
    assert str(v1.root) not in orjson.dumps(shown).decode()
    missing = v1.get("/v1/playbooks/nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "SEA050"
    assert str(v1.root) not in missing.text
    assert "did you mean 'chat'" in v1.get("/v1/playbooks/chta").json()["error"]["message"]


def test_a_playbook_is_drawn_as_a_graph_and_as_sea_graph_mermaid(v1: App) -> None:
    graph = v1.get("/v1/playbooks/meta_user/graph").json()
    assert graph["start"] == "route"
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert nodes["route"]["type"] == "subplay" and nodes["route"]["shape"] == "subroutine"
    assert nodes["check"]["shape"] == "diamond"
    assert nodes["route"]["detail"] == "sub_router_user"
    edges = {(e["source"], e["target"], e["kind"], e["label"]) for e in graph["edges"]}
    assert ("check", "speak", "case", "basic_chat") in edges
    assert ("check", "run", "default", "default") in edges
    assert ("route", "speak", "error", "error") in edges
    assert ("speak", None, "next", None) in edges
    mermaid = v1.get("/v1/playbooks/meta_user/graph", params={"format": "mermaid"})
    assert mermaid.headers["content-type"].startswith("text/vnd.mermaid")
    assert mermaid.text == to_mermaid(v1.ctx.library.get("meta_user"))
    assert graph["valid"] and graph["diagnostics"] == []
    invalid = v1.get("/v1/playbooks/broken/graph").json()  # drawn as far as it goes
    assert not invalid["valid"] and invalid["diagnostics"][0]["node_id"] == "a"
    assert invalid["edges"][0]["dangling"]
    refused = v1.get("/v1/playbooks/broken/graph", params={"format": "mermaid"})
    assert refused.status_code == 422 and refused.json()["error"]["diagnostics"]
    assert str(v1.root) not in refused.text  # the name, not the server's path


def test_a_posted_text_gets_the_diagnostics_sea_validate_gives(
        v1: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    answer = v1.post("/v1/validate", json={"text": TYPO, "name": "typo.json"}).json()
    file = tmp_path / "typo.json"
    file.write_text(TYPO)
    monkeypatch.chdir(ROOT)  # `sea validate` in this process, as a shell in the repository runs it
    capsys.readouterr()
    code = main(["validate", "--format", "json", "--no-cache", str(file)])
    expected = orjson.loads(capsys.readouterr().out)
    assert code == 1 and expected
    assert [{k: d[k] for k in expected[0] if k != "file"} for d in answer["diagnostics"]] == \
        [{k: d[k] for k in d if k != "file"} for d in expected]
    assert answer["ok"] is False and answer["errors"] == len(expected)
    assert answer["diagnostics"][0]["node_id"] == "b"
    assert answer["diagnostics"][0]["file"] == "typo.json"
    drawn = answer["graph"]  # the view survives the typo
    assert [n["id"] for n in drawn["nodes"]] == ["a", "b"]
    assert [(e["target"], e["dangling"]) for e in drawn["edges"]] == [("b", False),
                                                                      ("zz", True)]
    fixed = v1.post("/v1/validate", json={"text": TYPO.replace('"zz"', "null")}).json()
    assert fixed["ok"] and fixed["graph"]["nodes"][1]["id"] == "b"
    not_json = v1.post("/v1/validate", json={"text": '{"name": '}).json()
    assert not not_json["ok"] and not_json["diagnostics"][0]["line"] == 1
    assert not_json["graph"] is None


def test_validate_checks_tool_calls_as_sea_validate_with_the_servers_tools(v1: App) -> None:
    unknown = TYPO.replace('"zz"', "null").replace("memory_recent", "no_such_tool")
    loose = v1.post("/v1/validate", json={"text": unknown}).json()
    assert loose["ok"]  # a server given no --tools/--mcp checks no tool names (as sea validate)
    strict = v1.post("/v1/validate", json={"text": unknown, "strict": True}).json()
    assert not strict["ok"] and "no_such_tool" in strict["diagnostics"][0]["message"]
    v1.client.app.state.v1.host_tools = {"no_such_tool": None}  # type: ignore[attr-defined]
    v1.client.app.state.v1._libraries.clear()  # type: ignore[attr-defined]
    known = v1.post("/v1/validate", json={"text": unknown, "strict": True}).json()
    assert known["ok"]


def test_playbook_routes_need_their_roles(v1: App) -> None:
    for path in ("/v1/playbooks", "/v1/playbooks/chat", "/v1/playbooks/chat/graph"):
        assert v1.get(path, "k-none").status_code == 403
        assert v1.get(path, "k-read").status_code == 200
        assert v1.get(path, "nobody").status_code == 401
    assert v1.post("/v1/validate", "k-read", json={"text": TYPO}).status_code == 403
    assert v1.post("/v1/validate", "k-admin", json={"text": TYPO, "x": 1}).status_code == 422


def test_the_servers_host_tools_are_the_ones_validate_knows(v1: App) -> None:
    from langchain_core.tools import tool

    from sea.serve.v1.common import V1Options

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    calls = TYPO.replace('"zz"', "null").replace('"memory_recent", "args": {"limit": 1}',
                                                  '"weather", "args": {"town": "Kyoto"}')
    v1.client.app.state.v1 = V1Options.of(None, [weather])  # type: ignore[attr-defined]
    answer = v1.post("/v1/validate", json={"text": calls}).json()
    assert not answer["ok"] and answer["diagnostics"][0]["node_id"] == "b"
    assert "city" in orjson.dumps(answer["diagnostics"]).decode()
    fixed = v1.post("/v1/validate", json={"text": calls.replace("town", "city")}).json()
    assert fixed["ok"], fixed
    v1.client.app.state.v1 = V1Options.of(None, None)  # type: ignore[attr-defined]
    assert v1.post("/v1/validate", json={"text": calls}).json()["ok"]  # unchecked
