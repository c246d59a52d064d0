"""Every route, enumerated from the OpenAPI document (so a new route cannot be forgotten):
another tenant's key gets 404 for this tenant's threads, runs, pulses and personas and
never sees their ids; a key without roles gets 403 everywhere but the health checks."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import Request

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.llm.models import ModelSet
from sea.serve.app import create_app
from sea.serve.auth import ROLES, Principal
from sea.serve.context import ServeContext, ServerSettings
from sea.serve.db import ServerDB
from sea.serve.eventlog import MemoryEventLog
from sea.serve.records import PersonaRow
from tests.serve.server import ASKING, CHAT, REPLY

PUBLIC = {"/ok", "/info"}
ENDLESS = {"/v1/approvals/stream"}
"""Streams that never end for a key that may read them."""
OWNER = Principal("owner", frozenset(ROLES), "default", ("*",))
STRANGER = Principal("stranger", frozenset(ROLES), "acme", ("*",))
NOBODY = Principal("nobody", frozenset(), "default", ("*",))


class SwitchAuth:
    """Auth that answers the principal a test chose."""

    def __init__(self) -> None:
        self.principal = OWNER

    async def __call__(self, request: Request) -> Principal:
        return self.principal


@pytest.fixture
def served(tmp_path: Path) -> Any:
    import orjson

    books = tmp_path / "books"
    books.mkdir()
    for playbook in (CHAT, ASKING):
        (books / f"{playbook['name']}.json").write_bytes(orjson.dumps(playbook))
    store = SQLiteStore(tmp_path / "memory.sqlite")
    model = ScriptedChatModel.from_mapping({"default": [REPLY] * 20})
    from sea.engine.limits import Limits
    from sea.lang.library import PlaybookLibrary

    library = PlaybookLibrary.bundled([books])
    runtime = Runtime(RuntimeConfig(
        store, ModelSet.single(model), library=library,
        checkpoint_path=tmp_path / "checkpoints.sqlite",
        limits=Limits(approval_tools=frozenset({"memory_recent"}))))
    db = ServerDB(str(tmp_path / "memory.sqlite"))
    persona = Persona("aoi", "Aoi", "You are Aoi.")
    ctx = ServeContext(runtime, store, db, library, MemoryEventLog(),
                       ServerSettings(default_playbook="chat", default_persona=persona))
    ctx.records.ensure_persona(PersonaRow("aoi", "default", "Aoi", "You are Aoi."))
    app = create_app(ctx, token="unused")
    switch = SwitchAuth()
    app.state.auth = switch
    yield app, switch
    runtime.close()
    db.close()
    store.close()


def _calls(app: Any, ids: dict[str, str]) -> list[tuple[str, str, str]]:
    found = []
    for path, methods in app.openapi()["paths"].items():
        url = re.sub(r"\{(\w+)\}", lambda m: ids[m.group(1)], path)
        found.extend((method.upper(), path, url) for method in methods)
    return found


def test_every_route_hides_another_tenants_resources_and_needs_a_role(served: Any) -> None:
    app, switch = served

    async def go() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            thread = (await http.post("/threads", json={})).json()
            waiting = await http.post(f"/threads/{thread['thread_id']}/runs/wait", json={
                "assistant_id": "asking",
                "input": {"messages": [{"type": "human", "content": "look"}]}})
            assert "__interrupt__" in waiting.json()
            run = (await http.get(f"/threads/{thread['thread_id']}/runs")).json()[0]
            ids = {"thread_id": thread["thread_id"], "run_id": run["run_id"],
                   "pulse_id": run["run_id"], "persona_id": "aoi", "assistant_id": "agent",
                   "checkpoint_id": run["run_id"], "name": "chat", "plan_id": "no-such-plan",
                   "pin_id": "1", "schedule_id": "no-such-schedule"}
            secrets = {thread["thread_id"], run["run_id"]}
            calls = _calls(app, ids)
            assert len(calls) >= 35

            switch.principal = STRANGER
            for method, path, url in calls:
                if path in ENDLESS:
                    continue  # never ends; GET /v1/approvals is the same inbox, checked here
                answer = await http.request(method, url, json={} if method != "GET" else None,
                                            timeout=10)
                assert answer.status_code < 500, (method, path, answer.text)
                if re.search(r"\{(thread_id|run_id|pulse_id|persona_id)\}", path):
                    # the same answer as for ids that do not exist: 404, or 422 for a body
                    # read before the id is looked at (it tells nothing either way)
                    unknown = re.sub(r"\{(\w+)\}", lambda m: "unknown" if m.group(1) in (
                        "thread_id", "run_id", "pulse_id", "persona_id") else ids[m.group(1)],
                        path)
                    other = await http.request(method, unknown,
                                               json={} if method != "GET" else None)
                    assert answer.status_code == other.status_code, (method, path)
                    assert answer.status_code in (404, 422), (method, path, answer.text)
                if "stream" not in path:  # nothing but the ids it was sent comes back
                    unsent = {s for s in secrets if s not in url}
                    assert not any(s in answer.text for s in unsent), (method, path)

            switch.principal = NOBODY
            for method, path, url in calls:
                answer = await http.request(method, url, json={} if method != "GET" else None,
                                            timeout=10)
                expected = 200 if path in PUBLIC else 403
                assert answer.status_code == expected, (method, path, answer.text)
                if expected == 403:
                    assert answer.json()["error"]["code"].startswith("SEA")

    asyncio.run(go())
