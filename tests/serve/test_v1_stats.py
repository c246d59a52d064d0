"""``/v1/stats`` (= ``sea stats --json``, of the key's personas) and the trace of a pulse
(made from its logged events while the server keeps them)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from saimemory.base import DEFAULT_BUDGET
from sea.cli import main
from sea.serve.eventlog import MemoryEventLog
from sea.trace.format import Trace
from sea.trace.replay import areplay
from tests.serve.server import REPLY, ROOT
from tests.serve.test_agent_chat_ui import events_of
from tests.serve.v1app import App, serving


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[App]:
    with serving(tmp_path) as app:
        yield app


def pulse(app: App, persona: str, key: str) -> str:
    """A pulse of ``persona`` streamed to its end; its id."""
    answer = app.client.post(f"/v1/personas/{persona}/pulses", json={"input": "hello"},
                             headers={**app.as_(key), "Accept": "text/event-stream"})
    events = events_of(answer.text)
    assert events[-1]["event"] == "end", events
    pulse_id = events[0]["data"]["pulse_id"]
    assert isinstance(pulse_id, str)
    return pulse_id


@pytest.fixture
def sea_stats(v1: App, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str]) -> Callable[..., object]:
    """``sea stats --json --db`` the app's store ``WORDS``, in this process (as it runs in a
    shell: no project, no ``SEA_*`` setting but the data directory)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("SEA_DB", raising=False)
    monkeypatch.setenv("SEA_HOME", str(v1.root / "home"))

    def run(*words: str) -> object:
        capsys.readouterr()
        code = main(["stats", "--json", "--db", str(v1.root / "memory.sqlite"), *words])
        out = capsys.readouterr().out
        assert code == 0, out
        return orjson.loads(out)

    return run


def test_stats_are_sea_stats_json_of_the_keys_personas(
        v1: App, sea_stats: Callable[..., object]) -> None:
    pulse(v1, "aoi", "k-admin")
    pulse(v1, "aoi", "k-admin")
    pulse(v1, "zed", "k-globex")
    mine = v1.get("/v1/stats", "k-read").json()
    assert mine == sea_stats("--persona", "aoi")  # zed's call is another tenant's
    assert mine["calls"] == 2 and mine["by_node"][0]["key"] == "chat.reply"
    assert v1.get("/v1/stats", params={"persona": "aoi"}).json() == mine
    advised = v1.get("/v1/stats", "k-read", params={"advise": "true"}).json()
    assert advised == sea_stats("--persona", "aoi", "--advise")
    assert advised["advice"] == [] and "advice" not in mine
    theirs = v1.get("/v1/stats", "k-globex").json()
    assert theirs == sea_stats("--persona", "zed") and theirs["calls"] == 1
    assert v1.get("/v1/stats", params={"since": "1h"}).json() == mine
    later = v1.get("/v1/stats", params={"since": "2999-01-01T00:00:00+00:00"}).json()
    assert later["calls"] == 0
    bad = v1.get("/v1/stats", params={"since": "yesterday"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "SEA825"
    naive = v1.get("/v1/stats", params={"since": "2024-01-01T00:00:00"})
    assert "UTC offset" in naive.json()["error"]["message"]
    assert v1.get("/v1/stats", "k-none").status_code == 403
    foreign = v1.get("/v1/stats", "k-globex", params={"persona": "aoi"})
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "SEA820"


def test_the_trace_of_a_pulse_is_made_from_its_logged_events_and_replays(v1: App) -> None:
    first = pulse(v1, "aoi", "k-admin")  # earlier conversation of the second
    pulse_id = pulse(v1, "aoi", "k-admin")
    answer = v1.get(f"/v1/pulses/{pulse_id}/trace", "k-read")
    assert answer.status_code == 200, answer.text
    assert f'filename="pulse-{pulse_id}.trace.json"' in answer.headers["content-disposition"]
    trace = Trace.model_validate(answer.json())
    assert trace.pulse_id == pulse_id and trace.input == "hello" and trace.status == "ok"
    assert [(n.playbook, n.node) for n in trace.nodes] == [("chat", "reply")]
    assert trace.llm_calls[0].response == REPLY and trace.spoken == [REPLY]
    assert [m["content"] for m in trace.history] == ["hello", REPLY]  # the first pulse's
    assert all(first in m["tags"][1] for m in trace.history)
    assert trace.playbook_hashes == {"chat": v1.ctx.library.content_hash("chat")}
    report = asyncio.run(areplay(trace, v1.ctx.library, budget=DEFAULT_BUDGET))
    assert report.matched, report.divergence


def test_the_trace_of_a_pulse_whose_events_are_dropped_says_so(v1: App) -> None:
    pulse_id = pulse(v1, "aoi", "k-admin")
    v1.ctx.log = MemoryEventLog()  # the run's log outlived its --log-ttl
    answer = v1.get(f"/v1/pulses/{pulse_id}/trace", "k-read")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "SEA891"
    assert "--log-ttl" in answer.json()["error"]["message"]
    assert "sea run --record" in answer.json()["error"]["hint"]
    assert v1.get(f"/v1/pulses/{pulse_id}/trace", "k-none").status_code == 403
    foreign = v1.get(f"/v1/pulses/{pulse_id}/trace", "k-globex")
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "SEA820"
    assert v1.get("/v1/pulses/nope/trace").json()["error"]["code"] == "SEA820"
