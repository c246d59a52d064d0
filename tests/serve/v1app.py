"""The server's app in-process for the ``/v1`` tests: a real runtime (scripted model), a real
SQLite store and server tables in a temporary directory, a workspace, and keys of two
tenants with different roles.

The keys are a fake of the auth dependency (``app.state.auth``, the seam the server's
``require`` reads): a token names a principal, as a stored key would.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from fastapi import HTTPException, Request
from fastapi.testclient import TestClient

from saimemory import open_store
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm import ModelSet
from sea.serve.app import create_app
from sea.serve.auth import ROLES, Principal
from sea.serve.context import ServeContext, ServerSettings
from sea.serve.db import ServerDB
from sea.serve.eventlog import MemoryEventLog
from sea.serve.records import PersonaRow
from sea.serve.v1.common import V1Options
from tests.serve.server import CHAT, REPLY

KEYS = {
    "k-admin": Principal("alice", frozenset(ROLES), "acme", ("*",)),
    "k-read": Principal("rita", frozenset({"read"}), "acme", ("*",)),
    "k-none": Principal("nemo", frozenset(), "acme", ("*",)),
    "k-globex": Principal("gus", frozenset(ROLES), "globex", ("*",)),
}
"""Tokens and the principals they stand for: every role, only read, no role (acme), and
every role in another tenant (globex)."""

BROKEN = {"name": "broken", "description": "Goes nowhere.", "start_node": "a",
          "nodes": [{"id": "a", "type": "pass", "next": "nowhere"}]}


class KeyAuth:
    """The auth dependency over :data:`KEYS` (401 for anything else)."""

    async def __call__(self, request: Request) -> Principal:
        """The principal of the request's ``x-api-key``."""
        found = KEYS.get(request.headers.get("x-api-key", ""))
        if found is None:
            raise HTTPException(401, "a valid API key is needed")
        return found


@dataclass
class App:
    """The app and what it was built from."""

    client: TestClient
    ctx: ServeContext
    workspace: Path
    root: Path

    def as_(self, key: str) -> dict[str, str]:
        """The headers of a request made with ``key``."""
        return {"x-api-key": key}

    def call(self, method: str, path: str, key: str = "k-admin", body: Any = None) -> Any:
        """Any request with ``key`` (a JSON body unless it is a GET or a DELETE)."""
        more = {} if method in ("get", "delete") else {"json": body or {}}
        return self.client.request(method.upper(), path, headers=self.as_(key), **more)

    def get(self, path: str, key: str = "k-admin", **kwargs: Any) -> Any:
        """GET with ``key``."""
        return self.client.get(path, headers=self.as_(key), **kwargs)

    def post(self, path: str, key: str = "k-admin", **kwargs: Any) -> Any:
        """POST with ``key``."""
        return self.client.post(path, headers=self.as_(key), **kwargs)

    def delete(self, path: str, key: str = "k-admin", **kwargs: Any) -> Any:
        """DELETE with ``key``."""
        return self.client.delete(path, headers=self.as_(key), **kwargs)


@contextmanager
def serving(tmp_path: Path, location: str | None = None) -> Iterator[App]:
    """The app (a test module's ``v1`` fixture enters it): personas ``aoi`` (tenant
    acme) and ``zed`` (tenant globex), the test playbooks and a broken one, a workspace,
    the scripted model; the store is a SQLite file unless ``location`` names another."""
    books = tmp_path / "books"
    books.mkdir()
    for playbook in (CHAT, BROKEN):
        (books / f"{playbook['name']}.json").write_bytes(orjson.dumps(playbook))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    location = location or str(tmp_path / "memory.sqlite")
    store = open_store(location)
    db = ServerDB(location)
    library = PlaybookLibrary.bundled([books])
    model = ScriptedChatModel(default=[REPLY] * 50)
    runtime = Runtime(RuntimeConfig(
        store, ModelSet(normal=model, lightweight=model), library=library,
        checkpoint_path=tmp_path / "checkpoints.sqlite", workspace=workspace))
    ctx = ServeContext(runtime, store, db, library, MemoryEventLog(),
                       ServerSettings(default_playbook="chat", keepalive_s=1.0))
    ctx.records.add_persona(PersonaRow("aoi", "acme", "Aoi", "You are Aoi."))
    ctx.records.add_persona(PersonaRow("zed", "globex", "Zed", "You are Zed."))
    app = create_app(ctx, token="unused")
    app.state.auth = KeyAuth()
    app.state.v1 = V1Options(workspace=workspace)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield App(client, ctx, workspace, tmp_path)
    db.close()
    store.close()
