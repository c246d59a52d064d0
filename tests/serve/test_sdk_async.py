"""The real ``langgraph_sdk`` (its async client) against a real ``sea serve``: streams that
drop and rejoin, cancellation, one run per persona at a time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import ConflictError

from tests.serve.server import LONG, REPLY, Server


@pytest.fixture
def server(shared_server: Server) -> Server:
    """The server this test process shares with the modules like this one (conftest)."""
    return shared_server


def human(text: str) -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": text}]}


def client_of(server: Server) -> Any:
    return get_client(url=server.url, api_key=server.token)


async def until_running(client: Any, thread_id: str, run_id: str) -> None:
    for _ in range(200):
        if (await client.runs.get(thread_id, run_id))["status"] == "running":
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the run never ran")


def test_a_dropped_stream_rejoined_with_last_event_id_misses_and_repeats_nothing(
        server: Server) -> None:
    async def go() -> None:
        client = client_of(server)
        thread = await client.threads.create()
        seen: list[Any] = []
        stream = client.runs.stream(thread["thread_id"], "slow", input=human("tell me"),
                                    stream_mode=["messages-tuple", "values"],
                                    stream_resumable=True)
        async for part in stream:
            seen.append(part)
            if sum(p.event == "messages" for p in seen) == 20:
                break  # the client drops the connection mid-reply
        await stream.aclose()
        run_id = seen[0].data["run_id"]
        await asyncio.sleep(0.3)  # the pulse goes on without a reader
        rest = [p async for p in client.runs.join_stream(
            thread["thread_id"], run_id, last_event_id=seen[-1].id)]
        every = seen + rest
        ids = [p.id for p in every]
        assert len(ids) == len(set(ids))  # nothing twice
        order = [tuple(int(x) for x in i.split("-")) for i in ids]
        assert order == sorted(order)  # in order
        text = "".join(p.data[0]["content"] for p in every if p.event == "messages")
        assert text == LONG  # nothing missed
        assert rest[-1].event == "end"
        assert [p.event for p in every].count("metadata") == 1

    asyncio.run(go())


def test_a_run_is_cancelled_and_its_partial_reply_is_not_stored(server: Server) -> None:
    async def go() -> None:
        client = client_of(server)
        thread = await client.threads.create()
        run = await client.runs.create(thread["thread_id"], "slow", input=human("go on"))
        await until_running(client, thread["thread_id"], run["run_id"])
        await client.runs.cancel(thread["thread_id"], run["run_id"], wait=True)
        done = await client.runs.get(thread["thread_id"], run["run_id"])
        assert done["status"] == "interrupted"
        state = await client.threads.get(thread["thread_id"])
        assert state["status"] == "idle"
        assert [m["type"] for m in state["values"]["messages"]] == ["human"]

    asyncio.run(go())


def test_a_second_run_of_a_busy_persona_is_refused_or_waits_its_turn(server: Server) -> None:
    async def go() -> None:
        client = client_of(server)
        thread = await client.threads.create()
        other = await client.threads.create()  # another conversation of the same persona
        run = await client.runs.create(thread["thread_id"], "slow", input=human("long"))
        await until_running(client, thread["thread_id"], run["run_id"])
        with pytest.raises(ConflictError):
            await client.runs.create(thread["thread_id"], "agent", input=human("me too"))
        with pytest.raises(ConflictError):
            await client.runs.create(other["thread_id"], "agent", input=human("me too"),
                                     multitask_strategy="reject")
        queued = await client.runs.create(other["thread_id"], "agent", input=human("after"),
                                          multitask_strategy="enqueue")
        final = await client.runs.join(other["thread_id"], queued["run_id"])
        assert [m["content"] for m in final["messages"]] == ["after", REPLY]
        first = await client.runs.get(thread["thread_id"], run["run_id"])
        assert first["status"] == "success"  # the queued one waited for it to end
        assert first["updated_at"] <= (await client.runs.get(
            other["thread_id"], queued["run_id"]))["updated_at"]

    asyncio.run(go())


def test_an_unknown_thread_or_run_is_not_found_and_a_bad_key_is_refused(server: Server) -> None:
    async def go() -> None:
        client = client_of(server)
        from langgraph_sdk.errors import AuthenticationError, NotFoundError

        with pytest.raises(NotFoundError):
            await client.threads.get("no-such-thread")
        thread = await client.threads.create()
        with pytest.raises(NotFoundError):
            await client.runs.get(thread["thread_id"], "no-such-run")
        stranger = get_client(url=server.url, api_key="not-the-token")
        with pytest.raises(AuthenticationError):
            await stranger.threads.search()

    asyncio.run(go())


def test_a_stream_that_is_not_resumable_cancels_its_run_when_dropped(server: Server) -> None:
    async def go() -> None:
        client = client_of(server)
        thread = await client.threads.create()
        stream = client.runs.stream(thread["thread_id"], "slow", input=human("then stop"),
                                    stream_mode="messages-tuple")
        run_id = None
        async for part in stream:
            run_id = run_id or part.data["run_id"]
            if part.event == "messages":
                break
        await stream.aclose()
        for _ in range(200):
            run = await client.runs.get(thread["thread_id"], run_id)
            if run["status"] not in ("pending", "running"):
                break
            await asyncio.sleep(0.05)
        assert run["status"] == "interrupted"

    asyncio.run(go())
