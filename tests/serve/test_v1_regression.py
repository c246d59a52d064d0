"""``/v1/regression``: the traces of the server's ``--traces`` directory, listed and
replayed against the playbooks as they are now (matched, or diverged at step N)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.serve.server import CHAT
from tests.serve.test_v1_stats import pulse
from tests.serve.v1app import App, serving


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[App]:
    with serving(tmp_path) as app:
        yield app


def recorded(v1: App) -> Path:
    """A directory with the trace of one served pulse of aoi and a file that is no trace."""
    traces = v1.root / "traces"
    traces.mkdir()
    pulse_id = pulse(v1, "aoi", "k-admin")
    trace = v1.get(f"/v1/pulses/{pulse_id}/trace").json()
    (traces / "hello.json").write_bytes(orjson.dumps(trace))
    (traces / "notes.json").write_text("[1, 2]")
    (traces / "readme.txt").write_text("not listed")
    v1.client.app.state.v1.traces = traces  # type: ignore[attr-defined]
    return traces


def test_traces_are_listed_and_a_replay_matches_until_a_playbook_changes(v1: App) -> None:
    recorded(v1)
    items = v1.get("/v1/regression").json()["items"]
    assert [item["name"] for item in items] == ["hello.json", "notes.json"]
    assert items[0]["persona"] == "aoi" and items[0]["playbook"] == "chat"
    assert items[0]["status"] == "ok" and items[0]["input"] == "hello"
    assert items[1]["error"]["code"] == "SEA700"
    assert items[1]["error"]["message"].startswith("notes.json is not a SEA trace")
    assert str(v1.root) not in items[1]["error"]["message"]  # the server's paths stay its own
    same = v1.post("/v1/regression/replay", json={"name": "hello.json"}).json()
    assert same["matched"] is True and same["step"] is None and same["divergence"] is None
    assert same["nodes"] == 1 and same["llm_calls"] == 1
    changed = {**CHAT, "nodes": [{**CHAT["nodes"][0], "id": "answer"}], "start_node": "answer"}
    (v1.root / "books" / "chat.json").write_bytes(orjson.dumps(changed))
    v1.ctx.library.refresh()
    diverged = v1.post("/v1/regression/replay", json={"name": "hello.json"}).json()
    assert diverged["matched"] is False
    assert diverged["step"] == 2  # step 1: the user's message written to memory, the same
    assert diverged["divergence"]["field"] == "step"
    assert diverged["divergence"]["expected"] == "node chat.reply"
    assert diverged["divergence"]["actual"] == "node chat.answer"
    assert diverged["changed_playbooks"] == ["chat"]
    assert diverged["described"].startswith("replay diverged at chat.reply")


def test_replays_need_the_author_role_a_directory_and_a_trace_the_key_sees(v1: App) -> None:
    answer = v1.get("/v1/regression")
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "SEA890"
    assert "--traces" in answer.json()["error"]["message"]
    recorded(v1)
    assert v1.get("/v1/regression", "k-read").status_code == 403
    assert v1.post("/v1/regression/replay", "k-read", json={"name": "hello.json"}
                   ).status_code == 403
    assert v1.get("/v1/regression", "k-globex").json()["items"] == [
        {"name": "notes.json", "error": v1.get("/v1/regression").json()["items"][1]["error"]}]
    hidden = v1.post("/v1/regression/replay", "k-globex", json={"name": "hello.json"})
    assert hidden.status_code == 404 and hidden.json()["error"]["code"] == "SEA820"
    for name in ("../memory.sqlite", ".hidden.json", "readme.txt", "a/b.json"):
        wrong = v1.post("/v1/regression/replay", json={"name": name})
        assert wrong.status_code == 422, name
    missing = v1.post("/v1/regression/replay", json={"name": "gone.json"})
    assert missing.status_code == 404
