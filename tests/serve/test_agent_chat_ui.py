"""The requests agent-chat-ui sends (read from its source: ``src/providers/Stream.tsx``,
``Thread.tsx``, ``components/thread/index.tsx``, ``agent-inbox/hooks/
use-interrupted-actions.tsx``, through ``@langchain/langgraph-sdk``'s ``useStream``),
replayed over plain HTTP, their answers checked byte for byte where the UI depends on them.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import orjson
import pytest

from tests.serve.server import REPLY, Server


@pytest.fixture
def server(shared_server: Server) -> Server:
    """The server this test process shares with the modules like this one (conftest)."""
    return shared_server


@pytest.fixture
def http(server: Server) -> Any:
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as client:
        yield client


def events_of(body: str) -> list[dict[str, Any]]:
    """The SSE events of a response body: id, event, data (comments skipped)."""
    found = []
    for block in body.split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        if not lines:
            continue
        fields = dict(line.split(": ", 1) for line in lines)
        found.append({"id": fields.get("id"), "event": fields["event"],
                      "data": orjson.loads(fields["data"])})
    return found


def submit_body(text: str, **more: Any) -> dict[str, Any]:
    """What ``stream.submit`` of ``handleSubmit`` posts (no artifact context)."""
    return {"input": {"messages": [{"id": str(uuid.uuid4()), "type": "human",
                                    "content": [{"type": "text", "text": text}]}]},
            "stream_mode": ["values", "messages-tuple"], "stream_subgraphs": True,
            "stream_resumable": True, "on_disconnect": "continue",
            "assistant_id": "agent", **more}


def stream_run(http: httpx.Client, thread_id: str, body: dict[str, Any]) -> tuple[
        httpx.Response, list[dict[str, Any]]]:
    with http.stream("POST", f"/threads/{thread_id}/runs/stream", json=body,
                     headers={"Accept": "text/event-stream"}) as response:
        text = response.read().decode()
    return response, events_of(text) if response.status_code == 200 else []


def test_connection_check_and_thread_list(http: httpx.Client, server: Server) -> None:
    info = httpx.get(f"{server.url}/info")  # checkGraphStatus: before any key is set
    assert info.status_code == 200 and "version" in info.json()
    thread = http.post("/threads", json={}).json()
    http.post(f"/threads/{thread['thread_id']}/runs/wait",
              json={**submit_body("first words"), "stream_mode": ["values"]})
    listed = http.post("/threads/search",
                       json={"metadata": {"graph_id": "agent"}, "limit": 100}).json()
    mine = [t for t in listed if t["thread_id"] == thread["thread_id"]]
    assert mine and mine[0]["values"]["messages"][0]["content"] == "first words"  # its title
    assert mine[0]["metadata"]["graph_id"] == "agent"


def test_a_new_chat_streams_with_ids_and_the_headers_the_client_reads(http: httpx.Client) -> None:
    thread = http.post("/threads", json={}).json()
    history = http.post(f"/threads/{thread['thread_id']}/history", json={"limit": 10}).json()
    assert history[0]["values"] == {"messages": []} and history[0]["checkpoint"] is None
    body = submit_body("hello", checkpoint=history[0]["checkpoint"])
    response, events = stream_run(http, thread["thread_id"], body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    run_id = events[0]["data"]["run_id"]
    where = f"/threads/{thread['thread_id']}/runs/{run_id}"
    assert response.headers["content-location"] == where
    assert response.headers["location"] == f"{where}/stream"
    assert [e["event"] for e in events][0] == "metadata"
    assert events[-1] == {"id": events[-1]["id"], "event": "end", "data": None}
    assert all(e["id"] for e in events)  # every event has an id
    chunks = [e["data"] for e in events if e["event"] == "messages"]
    assert "".join(c[0]["content"] for c in chunks) == REPLY
    assert chunks[0][1]["langgraph_node"] == "reply"
    final = [e["data"] for e in events if e["event"] == "values"][-1]["messages"]
    assert final[0]["id"] == body["input"]["messages"][0]["id"]  # the optimistic message's id
    assert final[1]["id"] == chunks[0][0]["id"]

    # a reload: the run's stream is joined again after the last id seen
    middle = events[len(events) // 2]
    again = http.get(f"{where}/stream", headers={"Last-Event-ID": middle["id"]})
    rejoined = events_of(again.text)
    assert [e["id"] for e in rejoined] == [e["id"] for e in events[len(events) // 2 + 1:]]


def test_the_approve_card_answers_the_interrupt(http: httpx.Client) -> None:
    thread = http.post("/threads", json={}).json()
    _, events = stream_run(http, thread["thread_id"],
                           submit_body("look", assistant_id="asking"))
    values = [e["data"] for e in events if e["event"] == "values"][-1]
    request = values["__interrupt__"][0]["value"]
    assert request["action_requests"] == [{"name": "memory_recent", "args": {"limit": 1},
                                           "description": "tool 'memory_recent' (asking.look)"}]
    head = http.post(f"/threads/{thread['thread_id']}/history", json={"limit": 10}).json()[0]
    assert head["tasks"][0]["interrupts"] == values["__interrupt__"]  # after a reload too
    answer = {"input": {}, "command": {"resume": {"decisions": [{"type": "approve"}]}},
              "stream_mode": ["values", "messages-tuple"], "stream_subgraphs": True,
              "stream_resumable": True, "assistant_id": "asking",
              "checkpoint": head["checkpoint"]}
    response, resumed = stream_run(http, thread["thread_id"], answer)
    assert response.status_code == 200, response.text
    final = [e["data"] for e in resumed if e["event"] == "values"][-1]
    assert "__interrupt__" not in final and final["messages"][-1]["content"] == REPLY
    assert http.get(f"/threads/{thread['thread_id']}").json()["status"] == "idle"


def test_the_reject_card_and_mark_as_resolved_refuse_the_request(http: httpx.Client) -> None:
    for command, reason in (
            ({"resume": {"decisions": [{"type": "reject", "message": "not now"}]}}, "not now"),
            ({"goto": "__end__"}, "marked as resolved")):
        thread = http.post("/threads", json={}).json()
        stream_run(http, thread["thread_id"], submit_body("look", assistant_id="asking"))
        response, resumed = stream_run(http, thread["thread_id"], {
            "input": {}, "command": command, "stream_mode": ["values"],
            "assistant_id": "asking"})
        assert response.status_code == 200, response.text
        run_id = resumed[0]["data"]["run_id"]
        run = http.get(f"/threads/{thread['thread_id']}/runs/{run_id}").json()
        assert run["kwargs"]["answer"] == {"approved": False, "approver": "dev",
                                           "reason": reason}
        assert resumed[-1]["event"] == "end"


def test_an_edit_decision_and_regenerate_are_refused_with_reasons(http: httpx.Client) -> None:
    thread = http.post("/threads", json={}).json()
    stream_run(http, thread["thread_id"], submit_body("look", assistant_id="asking"))
    edit = http.post(f"/threads/{thread['thread_id']}/runs/stream", json={
        "input": {}, "assistant_id": "asking", "command": {"resume": {"decisions": [
            {"type": "edit", "edited_action": {"name": "memory_recent", "args": {}}}]}}})
    assert edit.status_code == 422
    assert edit.json()["error"]["code"] == "SEA825"
    assert edit.json()["detail"] == edit.json()["error"]["message"]
    stream_run(http, thread["thread_id"], {"input": {}, "assistant_id": "asking",
                                           "command": {"resume": {"decisions": [
                                               {"type": "approve"}]}}})
    history = http.post(f"/threads/{thread['thread_id']}/history", json={"limit": 10}).json()
    regenerate = http.post(f"/threads/{thread['thread_id']}/runs/stream", json={
        "input": None, "assistant_id": "agent", "checkpoint": {"checkpoint_id": "older"},
        "stream_mode": ["values"]})
    assert regenerate.status_code == 409
    assert regenerate.json()["error"]["code"] == "SEA822"
    assert len(history) == 1


def test_stop_cancels_the_run(http: httpx.Client) -> None:
    thread = http.post("/threads", json={}).json()
    run = http.post(f"/threads/{thread['thread_id']}/runs",
                    json={**submit_body("slowly"), "assistant_id": "slow"})
    run_id = run.json()["run_id"]
    assert run.headers["content-location"] == f"/threads/{thread['thread_id']}/runs/{run_id}"
    stopped = http.post(f"/threads/{thread['thread_id']}/runs/{run_id}/cancel",
                        params={"wait": "true"})
    assert stopped.status_code == 200
    assert stopped.json()["status"] == "interrupted"


def test_bad_requests_answer_the_error_shape_never_a_traceback(http: httpx.Client) -> None:
    broken = http.post("/threads", content=b"{not json", headers={
        "content-type": "application/json"})
    assert broken.status_code == 422
    assert set(broken.json()) == {"error", "detail"}
    assert broken.json()["error"]["code"] == "SEA825"
    unknown = http.post("/threads/search", json={"limit": "many"})
    assert unknown.status_code == 422 and unknown.json()["error"]["pointer"] == "/limit"
    thread = http.post("/threads", json={}).json()
    missing = http.post(f"/threads/{thread['thread_id']}/runs/wait",
                        json={**submit_body("x"), "assistant_id": "nobody"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "SEA820"
    empty = http.post(f"/threads/{thread['thread_id']}/runs/wait",
                      json={"assistant_id": "agent", "input": {"messages": []}})
    assert empty.status_code == 422 and "no input" in empty.json()["detail"]
    assert "Traceback" not in broken.text + unknown.text + missing.text + empty.text


def test_the_openapi_document_lists_every_route(http: httpx.Client, server: Server) -> None:
    document = httpx.get(f"{server.url}/openapi.json").json()
    paths = set(document["paths"])
    for path in ("/info", "/ok", "/assistants/search", "/threads", "/threads/search",
                 "/threads/{thread_id}/history", "/threads/{thread_id}/runs/stream",
                 "/threads/{thread_id}/runs/{run_id}/stream", "/v1/personas",
                 "/v1/personas/{persona_id}/pulses", "/v1/pulses/{pulse_id}/events",
                 "/v1/approvals"):
        assert path in paths, path
