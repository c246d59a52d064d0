"""The server's pure parts: the event log, the answers read from LangGraph's resume values,
approval requests in the human-in-the-loop shape, and a pulse in a conversation's thread."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from saimemory.records import CONVERSATION_TAG, Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.errors import InvalidRequest
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from sea.serve.compat.stream import position
from sea.serve.eventlog import Entry, MemoryEventLog
from sea.serve.thread_state import answer_of, interrupt_of
from sea.serve.v1.approvals import request_kind
from tests.serve.server import ASKING, CHAT

PLAN = {"action": "plan", "playbook": "p", "node": "n",
        "specs": [{"id": "1", "op": "write", "path": "a.md", "risk": "low", "summary": "A"},
                  {"id": "2", "op": "delete", "path": "b.md", "risk": "high", "summary": "B"}]}


def test_the_log_replays_after_a_position_then_follows_live_until_closed() -> None:
    async def go() -> None:
        log = MemoryEventLog(ttl_s=60)
        await log.open("r")
        assert await log.append("r", "a", 1) == 1
        assert await log.append("r", "b", 2) == 2
        first = await log.read("r", 1, 0.01)
        assert [(e.seq, e.kind) for e in first.entries] == [(2, "b")] and not first.closed
        waiting = asyncio.create_task(log.read("r", 2, 5))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # nothing new yet: the reader waits
        await log.append("r", "c", 3)
        assert [e.kind for e in (await waiting).entries] == ["c"]
        await log.close("r")
        closed = await log.read("r", 3, 5)  # at once: the log is closed
        assert closed.entries == () and closed.closed
        assert not (await log.read("unknown", 0, 0.01)).known
        assert await log.append("r", "late", 4) == 0  # nothing after the end

    asyncio.run(go())


def test_a_log_keeps_at_most_its_bound_and_says_so() -> None:
    async def go() -> None:
        log = MemoryEventLog(max_entries=3)
        for n in range(6):
            await log.append("r", "e", n)
        entries = (await log.read("r", 0, 0)).entries
        assert [e.kind for e in entries] == ["e", "e", "e", "log_truncated"]

    asyncio.run(go())


def test_last_event_ids_order_by_entry_then_part() -> None:
    assert position(None) == (0, -1)
    assert position("12-0") < position("12-1") < position("13-0")
    with pytest.raises(InvalidRequest):
        position("yesterday")


def test_decisions_become_seas_answers_with_the_keys_name() -> None:
    approve = {"decisions": [{"type": "approve"}]}
    assert answer_of(approve, "ops", []) == {"approved": True, "approver": "ops"}
    reject = {"decisions": [{"type": "reject", "message": "no"}]}
    assert answer_of(reject, "ops", []) == {"approved": False, "approver": "ops",
                                            "reason": "no"}
    mixed = {"decisions": [{"type": "approve"}, {"type": "reject"}]}
    assert answer_of(mixed, "ops", [PLAN]) == {"ids": ["1"], "approver": "ops", "reason": ""}
    with pytest.raises(InvalidRequest, match="as a whole"):
        answer_of(mixed, "ops", [{"tool": "t"}])
    with pytest.raises(InvalidRequest, match="approve or reject"):
        answer_of({"decisions": [{"type": "edit", "edited_action": {}}]}, "ops", [])
    assert answer_of({"ids": ["2"], "approver": "mallory"}, "ops", []) == {
        "ids": ["2"], "approver": "ops"}
    assert answer_of(True, "ops", []) == {"approved": True, "approver": "ops"}


def test_a_plans_request_is_one_action_per_spec() -> None:
    shown = interrupt_of("pulse", PLAN)
    names = [a["name"] for a in shown["value"]["action_requests"]]
    assert names == ["spec 1: write a.md", "spec 2: delete b.md"]
    assert shown["value"]["sea"] == PLAN
    assert shown["id"] == interrupt_of("pulse", PLAN)["id"]  # stable
    tool = interrupt_of("pulse", {"tool": "t", "args": {"x": 1}, "playbook": "p", "node": "n"})
    assert tool["value"]["action_requests"][0]["args"] == {"x": 1}
    assert tool["value"]["review_configs"][0]["allowed_decisions"] == ["approve", "reject"]


def test_the_inbox_names_each_request_kind() -> None:
    assert request_kind(PLAN) == "plan"
    actions = {"tools": ["notes_write"], "plan": {"actions": [
        {"action_id": "a1", "tool": "notes_write", "parameters": {"text": "x"}}], "reason": "r"}}
    assert request_kind(actions) == "actions"  # the actions node's model plan, as asked
    assert request_kind({"playbook_name": "sub_plan"}) == "exec"
    assert request_kind({"tool": "memory_recent", "args": {}}) == "tool"


def test_a_pulse_in_a_memory_thread_reads_and_writes_that_thread_only(tmp_path: Path) -> None:
    import orjson

    books = tmp_path / "books"
    books.mkdir()
    for playbook in (CHAT, ASKING):
        (books / f"{playbook['name']}.json").write_bytes(orjson.dumps(playbook))
    store = SQLiteStore(tmp_path / "memory.sqlite")
    model = ScriptedChatModel.from_mapping({"default": ["one", "two", "three"]})
    runtime = Runtime(RuntimeConfig(
        store, ModelSet.single(model), library=PlaybookLibrary.bundled([books]),
        checkpoint_path=tmp_path / "checkpoints.sqlite"))
    persona = Persona("aoi", "Aoi", "You are Aoi.")
    try:
        main = runtime.run_pulse(persona, "chat", "in the main thread")
        assert main.status == "ok"
        talk = store.create_thread("aoi", title="a conversation")
        done = runtime.run_pulse(persona, "chat", "in a conversation", thread=talk.id,
                                 input_uid="client-7",
                                 input_metadata={"client": "ui", "engine_memo": True})
        assert done.status == "ok", done.error
        inside = store.recent("aoi", thread=talk.id)
        assert [(m.role, m.content) for m in inside if CONVERSATION_TAG in m.tags] == [
            ("user", "in a conversation"), ("assistant", "two")]
        said = inside[0]
        assert said.uid == "client-7" and said.metadata == {"client": "ui"}  # no trust mark
        sent = [c.messages for c in model.calls]
        assert "in the main thread" not in str(sent[1])  # its own history only
        assert "in the main thread" in str(sent[0])
        recent_main = store.recent("aoi", thread=store.main_thread("aoi").id)
        assert "in a conversation" not in [m.content for m in recent_main]
    finally:
        runtime.close()
        store.close()


def test_a_quiet_stream_gets_keep_alives_and_a_dropped_one_says_so() -> None:
    from sea.serve import sse

    async def go() -> None:
        log = MemoryEventLog()
        await log.open("r")

        def parts(entry: Entry) -> list[sse.Part]:
            return [(str(entry.seq), entry.kind, entry.data)]

        body = sse.follow(log, "r", parts, keepalive_s=0.05)
        assert await anext(body) == sse.KEEPALIVE  # nothing happened for a while
        await log.append("r", "said", {"text": "hi"})
        assert await anext(body) == b'id: 1\nevent: said\ndata: {"text":"hi"}\n\n'
        await log.close("r")
        with pytest.raises(StopAsyncIteration):
            await anext(body)

        gone: list[str] = []
        await log.open("s")
        dropped = sse.follow(log, "s", parts, keepalive_s=0.05,
                             on_disconnect=lambda: gone.append("s"))
        await anext(dropped)
        await dropped.aclose()  # the client went away before the end
        assert gone == ["s"]

    asyncio.run(go())


def test_a_restarted_server_settles_the_runs_it_left_under_way(tmp_path: Path) -> None:
    from sea.serve.db import ServerDB
    from sea.serve.records import Records, RunRow, ThreadRow, settle_orphans

    db = ServerDB(str(tmp_path / "memory.sqlite"))
    try:
        records = Records(db)
        records.add_thread(ThreadRow("t", "aoi", "default", "m", {}, status="busy"))
        records.add_thread(ThreadRow("w", "aoi", "default", "n", {}, status="interrupted",
                                     waiting_pulse="p0"))
        records.add_run(RunRow("r", "t", "p", "aoi", "default", "agent", "chat", "running",
                               {}, {}))
        records.add_run(RunRow("d", "t", "q", "aoi", "default", "agent", "chat", "success",
                               {}, {}))
        assert settle_orphans(records) == 1
        run = records.run("r")
        assert run is not None and run.status == "error"
        assert run.error is not None and "stopped" in run.error["message"]
        assert records.run("d").status == "success"  # type: ignore[union-attr]
        assert records.thread("t").status == "idle"  # type: ignore[union-attr]
        waiting = records.thread("w")
        assert waiting is not None and waiting.status == "interrupted"
        assert waiting.waiting_pulse == "p0"
    finally:
        db.close()
