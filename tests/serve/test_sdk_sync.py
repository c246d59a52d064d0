"""The real ``langgraph_sdk`` (its synchronous client) against a real ``sea serve``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from tests.serve.server import REPLY, Server


@pytest.fixture
def server(shared_server: Server) -> Server:
    """The server this test process shares with the modules like this one (conftest)."""
    return shared_server


@pytest.fixture
def client(server: Server) -> Any:
    return get_sync_client(url=server.url, api_key=server.token)


@contextmanager
def refused(status: int, words: str) -> Iterator[None]:
    """The call fails with HTTP ``status``, its SEA error message containing ``words``."""
    with pytest.raises(httpx.HTTPStatusError) as caught:
        yield
    response = caught.value.response
    assert response.status_code == status, response.text
    assert words in response.json()["error"]["message"]
    assert response.json()["error"]["code"].startswith("SEA")


def human(text: str, mid: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "human", "content": text}
    if mid:
        message["id"] = mid
    return {"messages": [message]}


def test_assistants_are_the_top_level_playbooks_and_agent_the_default(client: Any) -> None:
    found = {a["graph_id"]: a for a in client.assistants.search(limit=100)}
    assert {"agent", "chat", "asking", "slow"} <= set(found)
    assert found["agent"]["metadata"]["playbook"] == "chat"  # --playbook chat
    by_id = client.assistants.get(found["asking"]["assistant_id"])
    assert by_id["graph_id"] == "asking"
    graph = client.assistants.get_graph("asking")
    assert {n["id"] for n in graph["nodes"]} == {"__start__", "look", "reply", "__end__"}
    assert {"source": "__start__", "target": "look"} in graph["edges"]
    schemas = client.assistants.get_schemas("agent")
    assert "messages" in schemas["input_schema"]["properties"]


def test_a_streamed_run_sends_metadata_chunks_values_and_end(client: Any) -> None:
    thread = client.threads.create()
    created: list[Any] = []
    parts = list(client.runs.stream(
        thread["thread_id"], "agent", input=human("hi", "client-1"),
        stream_mode=["values", "messages-tuple"], on_run_created=created.append))
    events = [p.event for p in parts]
    assert events[0] == "metadata" and events[-1] == "end"
    run_id = parts[0].data["run_id"]
    assert created and created[0]["run_id"] == run_id
    assert created[0]["thread_id"] == thread["thread_id"]
    chunks = [p.data[0] for p in parts if p.event == "messages"]
    assert "".join(c["content"] for c in chunks) == REPLY
    assert len({c["id"] for c in chunks}) == 1
    final = [p.data for p in parts if p.event == "values"][-1]["messages"]
    assert [(m["type"], m["content"]) for m in final] == [("human", "hi"), ("ai", REPLY)]
    assert final[0]["id"] == "client-1"  # the client's message id is kept
    assert final[1]["id"] == chunks[0]["id"]  # the stream's reply is the state's reply
    assert client.runs.get(thread["thread_id"], run_id)["status"] == "success"
    assert client.threads.get(thread["thread_id"])["status"] == "idle"


def test_runs_wait_answers_the_final_state_and_history_is_linear(client: Any) -> None:
    thread = client.threads.create()
    first = client.runs.wait(thread["thread_id"], "agent", input=human("one"))
    assert [m["content"] for m in first["messages"]] == ["one", REPLY]
    client.runs.wait(thread["thread_id"], "agent", input=human("two"))
    history = client.threads.get_history(thread["thread_id"])
    assert len(history) == 2
    newest, oldest = history
    assert [m["content"] for m in newest["values"]["messages"]] == ["one", REPLY, "two", REPLY]
    assert [m["content"] for m in oldest["values"]["messages"]] == ["one", REPLY]
    assert newest["parent_checkpoint"]["checkpoint_id"] == oldest["checkpoint"]["checkpoint_id"]
    assert oldest["parent_checkpoint"] is None
    state = client.threads.get_state(thread["thread_id"])
    assert state["checkpoint"] == newest["checkpoint"]
    runs = client.runs.list(thread["thread_id"])
    assert [r["status"] for r in runs] == ["success", "success"]


def test_conversations_of_one_persona_keep_their_own_history(client: Any) -> None:
    first = client.threads.create()
    second = client.threads.create()
    client.runs.wait(first["thread_id"], "agent", input=human("about cats"))
    client.runs.wait(second["thread_id"], "agent", input=human("about dogs"))
    one = client.threads.get(first["thread_id"])["values"]["messages"]
    two = client.threads.get(second["thread_id"])["values"]["messages"]
    assert [m["content"] for m in one] == ["about cats", REPLY]
    assert [m["content"] for m in two] == ["about dogs", REPLY]
    assert first["metadata"]["persona"] == second["metadata"]["persona"] == "aoi"


def test_a_waiting_run_shows_the_interrupt_and_is_resumed_with_a_command(client: Any) -> None:
    thread = client.threads.create()
    parts = list(client.runs.stream(thread["thread_id"], "asking", input=human("look"),
                                    stream_mode=["values", "updates"]))
    interrupted = [p.data for p in parts if p.event == "values" and "__interrupt__" in p.data]
    assert interrupted, [p.event for p in parts]
    interrupt = interrupted[-1]["__interrupt__"][0]
    value = interrupt["value"]
    assert value["action_requests"][0]["name"] == "memory_recent"
    assert value["action_requests"][0]["args"] == {"limit": 1}
    assert value["review_configs"][0]["allowed_decisions"] == ["approve", "reject"]
    assert value["sea"]["tool"] == "memory_recent" and value["sea"]["node"] == "look"
    assert any(p.event == "updates" and "__interrupt__" in p.data for p in parts)
    assert client.threads.get(thread["thread_id"])["status"] == "interrupted"
    state = client.threads.get_state(thread["thread_id"])
    assert state["tasks"][0]["interrupts"][0]["id"] == interrupt["id"]

    resumed = list(client.runs.stream(
        thread["thread_id"], "asking",
        command={"resume": {"decisions": [{"type": "approve"}]}},
        stream_mode=["values", "custom"]))
    calls = [p.data for p in resumed if p.event == "custom" and p.data["kind"] == "tool_call"]
    assert [(c["tool"], c["ok"]) for c in calls] == [("memory_recent", True)]
    answered = client.runs.get(thread["thread_id"], resumed[0].data["run_id"])
    assert answered["kwargs"]["answer"] == {"approved": True, "approver": "dev"}  # the key's
    assert resumed[-1].event == "end"
    final = [p.data for p in resumed if p.event == "values"][-1]
    assert "__interrupt__" not in final
    assert final["messages"][-1]["content"] == REPLY
    assert client.threads.get(thread["thread_id"])["status"] == "idle"


def test_a_command_sent_to_a_thread_that_waits_for_nothing_is_a_conflict(client: Any) -> None:
    thread = client.threads.create()
    with refused(409, "waits for no answer"):
        client.runs.wait(thread["thread_id"], "agent",
                         command={"resume": {"decisions": [{"type": "approve"}]}})


def test_forks_and_state_edits_answer_why_they_cannot_be_done(client: Any) -> None:
    thread = client.threads.create()
    client.runs.wait(thread["thread_id"], "agent", input=human("one"))
    with refused(409, "append-only"):
        client.runs.wait(thread["thread_id"], "agent", input=human("again"),
                         checkpoint={"checkpoint_id": "not-the-head"})
    with refused(422, "cannot edit"):
        client.threads.update_state(thread["thread_id"], {"messages": []})
    head = client.threads.get_state(thread["thread_id"])["checkpoint"]
    done = client.runs.wait(thread["thread_id"], "agent", input=human("at the head"),
                            checkpoint=head)
    assert done["messages"][-2]["content"] == "at the head"


def test_a_run_without_a_thread_starts_a_conversation_and_a_thread_can_be_followed(
        client: Any) -> None:
    created: list[Any] = []
    final = client.runs.wait(None, "agent", input=human("no thread"),
                             on_run_created=created.append)
    assert [m["content"] for m in final["messages"]] == ["no thread", REPLY]
    thread_id = created[0]["thread_id"]
    assert client.threads.get(thread_id)["metadata"]["persona"] == "aoi"
    parts = list(client.threads.join_stream(thread_id, stream_mode="values"))
    assert parts[0].event == "metadata" and parts[-1].event == "end"
    assert parts[-2].data["messages"][-1]["content"] == REPLY
