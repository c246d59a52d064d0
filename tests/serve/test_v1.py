"""SEA's own API under ``/v1``: personas, pulses with SEA's events, the approvals inbox."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from tests.serve.server import REPLY, Server
from tests.serve.test_agent_chat_ui import events_of


@pytest.fixture
def http(server: Server) -> Any:
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as client:
        yield client


def test_personas_are_listed_created_and_shown(http: httpx.Client) -> None:
    listed = http.get("/v1/personas").json()["items"]
    assert [p["id"] for p in listed] == ["aoi"]  # the default persona
    made = http.post("/v1/personas", json={"id": "kai", "name": "Kai",
                                           "system_prompt": "You are Kai."})
    assert made.status_code == 201 and made.json()["tenant"] == "default"
    assert http.post("/v1/personas", json={"id": "kai", "name": "Kai"}).status_code == 409
    assert http.get("/v1/personas/kai").json()["name"] == "Kai"
    assert http.get("/v1/personas/nobody").json()["error"]["code"] == "SEA820"
    thread = http.post("/threads", json={"metadata": {"persona": "kai"}}).json()
    done = http.post(f"/threads/{thread['thread_id']}/runs/wait", json={
        "assistant_id": "agent", "input": {"messages": [{"type": "human", "content": "hi"}]}})
    assert done.json()["messages"][-1]["content"] == REPLY
    unknown = http.post("/threads", json={"metadata": {"persona": "nobody"}})
    assert unknown.status_code == 404  # a new chat never makes a persona


def test_a_pulse_streams_sea_events_and_its_log_is_rejoined(http: httpx.Client) -> None:
    with http.stream("POST", "/v1/personas/aoi/pulses", json={"input": "hello"},
                     headers={"Accept": "text/event-stream"}) as response:
        events = events_of(response.read().decode())
    kinds = [e["event"] for e in events]
    assert kinds[0] == "metadata" and kinds[-1] == "end"
    assert "pulse_start" in kinds and "token" in kinds and "pulse_end" in kinds
    assert "values" not in kinds  # SEA's own events only
    assert [int(e["id"]) for e in events] == sorted(int(e["id"]) for e in events)
    pulse_id = events[0]["data"]["pulse_id"]
    shown = http.get(f"/v1/pulses/{pulse_id}").json()
    assert shown["status"] == "success" and shown["playbook"] == "chat"
    assert shown["pulse_status"] == "ok"
    assert shown["budget"] == {"max_calls": None, "max_tokens_in": None,  # none set
                               "max_tokens_out": None, "max_cost": None}
    assert shown["max_steps"] == 500
    third = events[2]["id"]
    again = events_of(http.get(f"/v1/pulses/{pulse_id}/events",
                               headers={"Last-Event-ID": third}).text)
    assert [e["id"] for e in again] == [e["id"] for e in events[3:]]
    listed = http.get("/v1/pulses", params={"persona": "aoi"}).json()["items"]
    assert pulse_id in [p["id"] for p in listed]


def test_the_inbox_lists_waiting_pulses_and_a_resume_answers_them(http: httpx.Client,
                                                                  server: Server) -> None:
    seen: list[dict[str, Any]] = []
    ready = threading.Event()

    def watch() -> None:
        with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as own, \
                own.stream("GET", "/v1/approvals/stream") as response:
            buffer = ""
            for text in response.iter_text():
                buffer += text
                while "\n\n" in buffer:
                    block, buffer = buffer.split("\n\n", 1)
                    found = events_of(block + "\n\n")
                    seen.extend(found)
                    ready.set()
                    if found and found[-1]["data"]["items"]:
                        return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert ready.wait(10)
    started = http.post("/v1/personas/aoi/pulses", json={"input": "look",
                                                         "playbook": "asking"})
    assert started.status_code == 202
    pulse_id = started.json()["pulse_id"]
    watcher.join(15)
    assert seen[-1]["data"]["items"][0]["pulse_id"] == pulse_id  # the live inbox saw it
    inbox = http.get("/v1/approvals").json()["items"]
    item = next(i for i in inbox if i["pulse_id"] == pulse_id)
    assert item["kind"] == "tool" and item["request"]["tool"] == "memory_recent"
    answered = http.post(f"/v1/pulses/{pulse_id}/resume",
                         json={"answer": {"approved": True, "approver": "mallory"}})
    assert answered.status_code == 202
    events = events_of(http.get(f"/v1/pulses/{pulse_id}/events").text)
    assert events[-1]["data"]["status"] == "ok"
    runs = http.get(f"/v1/pulses/{pulse_id}").json()["runs"]
    assert len(runs) == 2
    recorded = http.get(f"/threads/aoi.main/runs/{runs[1]}").json()["kwargs"]["answer"]
    assert recorded == {"approved": True, "approver": "dev"}  # the key's name, not mallory
    decisions = http.get(f"/v1/pulses/{pulse_id}").json()["decisions"]
    assert [(d["run_id"], d["answer"]) for d in decisions] == [(runs[1], recorded)]
    assert decisions[0]["at"].startswith("20")  # when it was given
    assert pulse_id not in [i["pulse_id"] for i in http.get("/v1/approvals").json()["items"]]
    again = http.post(f"/v1/pulses/{pulse_id}/resume", json={"answer": True})
    assert again.status_code == 409 and again.json()["error"]["code"] == "SEA824"


def test_a_busy_persona_refuses_a_pulse_unless_it_may_wait(http: httpx.Client) -> None:
    first = http.post("/v1/personas/aoi/pulses", json={"input": "long", "playbook": "slow"})
    pulse_id = first.json()["pulse_id"]
    refused = http.post("/v1/personas/aoi/pulses", json={"input": "now"})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "SEA821"
    assert http.post(f"/v1/pulses/{pulse_id}/cancel").json() == {"cancelled": True}
    events = events_of(http.get(f"/v1/pulses/{pulse_id}/events").text)
    assert events[-1]["data"]["status"] == "cancelled"


def test_a_pulse_of_higher_priority_is_not_refused_for_a_lower_one(http: httpx.Client) -> None:
    first = http.post("/v1/personas/aoi/pulses", json={"input": "long", "playbook": "slow",
                                                       "priority": "autonomous"})
    auto = first.json()["pulse_id"]
    also_auto = http.post("/v1/personas/aoi/pulses", json={"input": "no",
                                                           "priority": "scheduled"})
    assert also_auto.status_code == 409  # a lower one is refused, as before
    user = http.post("/v1/personas/aoi/pulses", json={"input": "now"})
    assert user.status_code == 202, user.text  # a person's turn comes before it
    for pulse_id in (auto, user.json()["pulse_id"]):
        events = events_of(http.get(f"/v1/pulses/{pulse_id}/events").text)
        assert events[-1]["data"]["status"] == "ok", events[-1]
    bad = http.post("/v1/personas/aoi/pulses", json={"input": "hi", "priority": "urgent"})
    assert bad.status_code == 422 and bad.json()["error"]["pointer"] == "/priority"
    assert bad.json()["error"]["code"] == "SEA825"
