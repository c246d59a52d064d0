"""Threads: a LangGraph thread is a conversation of a persona.

A conversation is held in SAIMemory as a sub-thread of its persona: its history is its
own, while the persona's pins, search, plans and short-term memory are shared by all its
conversations. ``POST /threads`` makes one for the persona ``metadata.persona`` names, else
for the server's default persona; it never makes a persona.

State: the conversation's newest messages; its history is linear, one checkpoint per pulse
(``checkpoint_id`` = the pulse's id, its parent the pulse before). SAIMemory is append-only:
editing the state or forking from an older checkpoint answers a clear 422/409.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict

from sea.errors import (
    AlreadyExists,
    ForkUnsupported,
    InvalidRequest,
    ResourceNotFound,
    RunConflict,
    StateEditUnsupported,
)
from sea.serve.auth import Principal
from sea.serve.compat.history import states
from sea.serve.context import ServeContext
from sea.serve.deps import Ctx, Reader, Runner
from sea.serve.records import ThreadRow, json_filter

router = APIRouter(tags=["threads"])


class ThreadCreate(BaseModel):
    """``POST /threads``."""

    model_config = ConfigDict(extra="allow")
    thread_id: str | None = None
    metadata: dict[str, Any] | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"


class ThreadSearch(BaseModel):
    """``POST /threads/search`` and ``/count``."""

    model_config = ConfigDict(extra="allow")
    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None
    status: Literal["idle", "busy", "interrupted", "error"] | None = None
    limit: int = 10
    offset: int = 0
    ids: list[str] | None = None


class ThreadPatch(BaseModel):
    """``PATCH /threads/{id}``."""

    model_config = ConfigDict(extra="allow")
    metadata: dict[str, Any] = {}


class HistoryQuery(BaseModel):
    """``POST /threads/{id}/history``."""

    model_config = ConfigDict(extra="allow")
    limit: int = 10
    before: Any = None
    metadata: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None


async def thread_json(ctx: ServeContext, row: ThreadRow, *, values: bool = True) -> dict[str, Any]:
    """A conversation as LangGraph's ``Thread``."""
    return {
        "thread_id": row.thread_id, "created_at": row.created_at,
        "updated_at": row.updated_at, "metadata": row.metadata, "status": row.status,
        "values": await ctx.hub.values(row) if values else {},
        "interrupts": {str(row.waiting_pulse): row.interrupts} if row.interrupts else {},
        "config": {},
    }


@router.post("/threads")
async def create(body: ThreadCreate, ctx: Ctx,
                 principal: Runner) -> dict[str, Any]:
    """Start a conversation of a persona (``metadata.persona``, else the default one)."""
    metadata = dict(body.metadata or {})
    thread_id = body.thread_id or str(uuid.uuid4())
    found = await ctx.call(ctx.records.thread, thread_id)
    if found is not None:
        if body.if_exists == "do_nothing" and principal.sees(found.persona, found.tenant):
            return await thread_json(ctx, found)
        raise AlreadyExists(f"thread {thread_id!r} exists already")
    row = await new_conversation(ctx, principal, thread_id, metadata)
    return await thread_json(ctx, row, values=False)


async def new_conversation(ctx: ServeContext, principal: Principal, thread_id: str,
                           metadata: dict[str, Any]) -> ThreadRow:
    """Start a conversation of the persona ``metadata.persona`` names, else of the default
    one, as a new SAIMemory sub-thread of the persona.

    Raises:
        InvalidRequest: no persona named and no default one.
        ResourceNotFound: the persona is unknown, or not the key's.
    """
    persona_id = metadata.get("persona")
    if persona_id is None:
        default = ctx.settings.default_persona
        if default is None:
            raise InvalidRequest("this server has no default persona: name one in "
                                 "metadata.persona")
        persona_id = default.id
    if not isinstance(persona_id, str):
        raise InvalidRequest("metadata.persona must be a persona's id (a string)")
    persona = await ctx.visible_persona(principal, persona_id)
    memory = await ctx.call(ctx.store.create_thread, persona.id,
                            title=f"conversation {thread_id}")
    row = ThreadRow(thread_id, persona.id, persona.tenant, memory.id,
                    {**metadata, "persona": persona.id})
    return await ctx.call(ctx.records.add_thread, row)


async def _search(ctx: ServeContext, principal: Principal, body: ThreadSearch) -> list[ThreadRow]:
    rows = await ctx.call(ctx.records.threads, principal.tenant, status=body.status,
                          limit=10_000)
    rows = [r for r in rows if principal.sees(r.persona, r.tenant)
            and json_filter(r.metadata, body.metadata)
            and (body.ids is None or r.thread_id in body.ids)]
    return rows


@router.post("/threads/search")
async def search(body: ThreadSearch, ctx: Ctx,
                 principal: Reader) -> list[dict[str, Any]]:
    """The conversations the key may see that match, newest change first."""
    rows = (await _search(ctx, principal, body))[body.offset:body.offset + body.limit]
    return [await thread_json(ctx, row) for row in rows]


@router.post("/threads/count")
async def count(body: ThreadSearch, ctx: Ctx,
                principal: Reader) -> int:
    """How many conversations match."""
    return len(await _search(ctx, principal, body))


@router.get("/threads/{thread_id}")
async def get(thread_id: str, ctx: Ctx,
              principal: Reader) -> dict[str, Any]:
    """One conversation."""
    return await thread_json(ctx, await ctx.visible_thread(principal, thread_id))


@router.patch("/threads/{thread_id}")
async def patch(thread_id: str, body: ThreadPatch, ctx: Ctx,
                principal: Runner) -> dict[str, Any]:
    """Merge metadata into a conversation's (its persona cannot change)."""
    row = await ctx.visible_thread(principal, thread_id)
    if "persona" in body.metadata and body.metadata["persona"] != row.persona:
        raise StateEditUnsupported("a conversation's persona cannot change: start a new "
                                   "thread for another persona")
    merged = {**row.metadata, **body.metadata}
    updated = await ctx.call(ctx.records.update_thread, thread_id, metadata=merged)
    assert updated is not None
    return await thread_json(ctx, updated)


@router.delete("/threads/{thread_id}", status_code=204)
async def delete(thread_id: str, ctx: Ctx,
                 principal: Runner) -> Response:
    """Forget a conversation's thread and runs (its messages stay in the persona's memory,
    which is append-only)."""
    row = await ctx.visible_thread(principal, thread_id)
    if row.status == "busy":
        raise RunConflict(f"thread {thread_id!r} has a run under way: cancel it first")
    await ctx.call(ctx.records.delete_thread, thread_id)
    return Response(status_code=204)


@router.get("/threads/{thread_id}/state")
async def state(thread_id: str, subgraphs: bool = False, *, ctx: Ctx,
                principal: Reader) -> dict[str, Any]:
    """The conversation's state now (its head checkpoint)."""
    row = await ctx.visible_thread(principal, thread_id)
    found = await states(ctx, row, limit=1)
    return found[0]


@router.get("/threads/{thread_id}/state/{checkpoint_id}")
async def state_at(thread_id: str, checkpoint_id: str, ctx: Ctx,
                   principal: Reader) -> dict[str, Any]:
    """The conversation's state at one checkpoint (a pulse's end)."""
    row = await ctx.visible_thread(principal, thread_id)
    for each in await states(ctx, row, limit=10_000):
        if each["checkpoint"]["checkpoint_id"] == checkpoint_id:
            return each
    raise ResourceNotFound(f"checkpoint {checkpoint_id!r} not found in thread {thread_id!r}")


@router.post("/threads/{thread_id}/state")
async def update_state(thread_id: str, ctx: Ctx,
                       principal: Runner) -> dict[str, Any]:
    """Editing a conversation's state: refused (its state is its stored memory)."""
    await ctx.visible_thread(principal, thread_id)
    raise StateEditUnsupported(
        "SEA cannot edit a conversation's state: it is the persona's stored memory, which "
        "only pulses write (append-only); send a new run instead")


@router.post("/threads/{thread_id}/history")
async def history(thread_id: str, body: HistoryQuery, ctx: Ctx,
                  principal: Reader) -> list[dict[str, Any]]:
    """The conversation's states, newest first, one per pulse."""
    row = await ctx.visible_thread(principal, thread_id)
    return await states(ctx, row, limit=max(1, min(body.limit, 1000)))


@router.get("/threads/{thread_id}/history")
async def history_get(thread_id: str, limit: int = 10, *, ctx: Ctx,
                      principal: Reader) -> list[dict[str, Any]]:
    """The conversation's states, newest first (the GET form)."""
    row = await ctx.visible_thread(principal, thread_id)
    return await states(ctx, row, limit=max(1, min(limit, 1000)))


@router.post("/threads/{thread_id}/copy")
async def copy(thread_id: str, ctx: Ctx,
               principal: Runner) -> dict[str, Any]:
    """Copying a conversation: refused (it would fork the persona's memory)."""
    await ctx.visible_thread(principal, thread_id)
    raise ForkUnsupported("SEA cannot copy a conversation: SAIMemory's history is "
                          "append-only and one line per conversation; start a new thread")
