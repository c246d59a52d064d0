"""What every router of the server works with: one object, ``app.state.sea``.

Routers get it with the :func:`context` dependency; they never read globals or the
environment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio.to_thread
from fastapi import Request

from saimemory.base import MessageStore
from saimemory.records import Persona
from sea.errors import ResourceNotFound
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.serve.auth import Principal
from sea.serve.db import ServerDB
from sea.serve.eventlog import EventLog
from sea.serve.hub import RunHub
from sea.serve.metrics import MeteredLog, ServerMetrics
from sea.serve.records import PersonaRow, Records, ThreadRow

T = TypeVar("T")

DEFAULT_TENANT = "default"


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """What the server was started with, beyond its runtime."""

    default_playbook: str = "meta_user"
    """The playbook the ``agent`` assistant runs."""
    default_persona: Persona | None = None
    """The persona a new conversation belongs to when the request names none."""
    keepalive_s: float = 15.0
    """Seconds between keep-alive comments on an idle stream."""
    history_limit: int = 50
    """How many of a conversation's newest messages its state shows."""
    version: str = ""


@dataclass
class ServeContext:
    """The server's parts: the runtime that runs pulses, the store it reads, the server's
    own rows, the event logs, the playbook library and the run hub.

    Args:
        runtime: Runs the pulses (the server's only one).
        store: The persona store the runtime writes.
        db: The server's own tables, in the store's database.
        library: The playbooks (assistants are its top-level ones).
        log: The runs' event logs.
        settings: The server's settings.
        make_hub: Builds the run hub from the runtime, store, records, log and history
            limit (default :class:`RunHub`).
    """

    runtime: Runtime
    store: MessageStore
    db: ServerDB
    library: PlaybookLibrary
    log: EventLog
    settings: ServerSettings = field(default_factory=ServerSettings)
    make_hub: Callable[[Runtime, MessageStore, Records, EventLog, int], RunHub] = RunHub
    """Builds the run hub (:func:`sea.serve.fleet.fleet_parts` gives the one for a
    PostgreSQL store)."""
    records: Records = field(init=False)
    hub: RunHub = field(init=False)
    """The run hub."""
    metrics: ServerMetrics = field(init=False)
    """The server's Prometheus metrics (the log given is wrapped to count its entries)."""

    def __post_init__(self) -> None:
        self.records = Records(self.db)
        self.metrics = ServerMetrics()
        self.log = MeteredLog(self.log, self.metrics)
        self.hub = self.make_hub(self.runtime, self.store, self.records, self.log,
                                 self.settings.history_limit)

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking call (the database, the store) in a worker thread."""
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))

    async def visible_persona(self, principal: Principal, persona_id: str) -> PersonaRow:
        """The persona ``persona_id`` if the key may reach it.

        Raises:
            ResourceNotFound: there is none, or the key may not see it (the same 404).
        """
        row = await self.call(self.records.persona, persona_id)
        if row is None or not principal.sees(row.id, row.tenant):
            raise ResourceNotFound(f"persona {persona_id!r} not found")
        return row

    async def visible_thread(self, principal: Principal, thread_id: str) -> ThreadRow:
        """The conversation ``thread_id`` if the key may reach its persona.

        Raises:
            ResourceNotFound: there is none, or the key may not see it (the same 404).
        """
        row = await self.call(self.records.thread, thread_id)
        if row is None or not principal.sees(row.persona, row.tenant):
            raise ResourceNotFound(f"thread {thread_id!r} not found")
        return row


def context(request: Request) -> ServeContext:
    """The FastAPI dependency that gives a route the server's context."""
    found: ServeContext = request.app.state.sea
    return found
