"""``/v1/personas/{persona}/...``: a persona's SAIMemory, read and pinned over HTTP.

What ``sea memory`` shows: the newest messages (of one thread, with a tag, before a message
id), a full-text search, the persona's threads (its main thread and the sub-threads its
conversations and subagents run in, with their chronicles) and its pinned items, which a key
with the ``memory`` role adds and removes. Messages are given as ``sea memory --json``
gives them; a stored ``<system>`` memo stays a message of role ``system`` (shown, never
written here: a pin is the persona's own text, checked by the store).
"""

from __future__ import annotations

from collections import deque
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from saimemory import Message
from saimemory.errors import PinLimitError
from saimemory.jsonl import message_fields
from saimemory.pins import Pin
from saimemory.records import Thread
from sea.errors import ResourceNotFound
from sea.serve.auth import Principal
from sea.serve.context import ServeContext
from sea.serve.deps import Ctx, Reader
from sea.serve.v1.common import Conflict, Memory

router = APIRouter(prefix="/v1", tags=["memory"])
Limit = Annotated[int, Query(ge=1, le=500)]


class PinRequest(BaseModel):
    """``POST .../pins``: one fact, goal or preference the persona keeps in every
    conversation (at most five)."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=2000)


def pin_json(pin: Pin) -> dict[str, Any]:
    """A pinned item as ``sea memory pins --json`` gives it."""
    return {"id": pin.id, "text": pin.text, "created_at": pin.created_at.isoformat()}


def thread_json(thread: Thread) -> dict[str, Any]:
    """A memory thread: id, parent (null for the main thread), title, times, chronicle."""
    return {"id": thread.id, "parent": thread.parent, "title": thread.title,
            "created_at": thread.created_at.isoformat(), "open": thread.open,
            "closed_at": thread.closed_at.isoformat() if thread.closed_at else None,
            "chronicle": thread.chronicle}


async def _persona(ctx: ServeContext, principal: Principal, persona_id: str) -> str:
    return (await ctx.visible_persona(principal, persona_id)).id


def newest(ctx: ServeContext, persona: str, *, limit: int, thread: str | None,
           tag: str | None, before: int | None) -> list[Message]:
    """The newest ``limit`` messages of the persona (of ``thread``, tagged ``tag``, with an
    id below ``before``), oldest first. Without a tag or ``before`` this is the store's
    own ``recent``; with them the persona's messages are read in id order (up to
    ``before``), keeping the last ``limit`` that match."""
    if tag is None and before is None:
        return ctx.store.recent(persona, limit=limit, thread=thread)
    kept: deque[Message] = deque(maxlen=limit)
    for message in ctx.store.iter_messages(persona):
        if before is not None and message.id >= before:
            break
        if (thread is None or message.thread == thread) and (
                tag is None or tag in message.tags):
            kept.append(message)
    return list(kept)


@router.get("/personas/{persona_id}/messages")
async def messages(persona_id: str, ctx: Ctx, principal: Reader, limit: Limit = 20,
                   thread: str | None = None, tag: str | None = None,
                   before: Annotated[int | None, Query(ge=1)] = None) -> dict[str, Any]:
    """The persona's newest messages, oldest first (``thread``, ``tag`` and ``before`` a
    message id narrow them; ``before`` the first item's id pages back)."""
    persona = await _persona(ctx, principal, persona_id)
    found = await ctx.call(newest, ctx, persona, limit=limit, thread=thread, tag=tag,
                           before=before)
    return {"items": [message_fields(m) for m in found]}


@router.get("/personas/{persona_id}/search")
async def search(persona_id: str, q: Annotated[str, Query(min_length=1, max_length=2000)],
                 ctx: Ctx, principal: Reader, mode: Literal["all", "any"] = "all",
                 tag: Annotated[list[str] | None, Query()] = None,
                 limit: Limit = 20) -> dict[str, Any]:
    """Full-text search (Japanese and English) of the persona's messages, best first:
    ``mode=all`` needs every word, ``any`` one (rare words rank first); ``tag`` (repeatable)
    is required on every hit."""
    persona = await _persona(ctx, principal, persona_id)
    hits = await ctx.call(ctx.store.search, persona, q, tags=tag or [], limit=limit,
                          match=mode)
    return {"items": [{"rank": hit.rank, "snippet": hit.snippet,
                       "message": message_fields(hit.message)} for hit in hits]}


@router.get("/personas/{persona_id}/threads")
async def threads(persona_id: str, ctx: Ctx, principal: Reader) -> dict[str, Any]:
    """The persona's memory threads, its main thread first."""
    persona = await _persona(ctx, principal, persona_id)
    found = await ctx.call(ctx.store.threads, persona)
    return {"items": [thread_json(t) for t in found]}


@router.get("/personas/{persona_id}/pins")
async def pins(persona_id: str, ctx: Ctx, principal: Reader) -> dict[str, Any]:
    """The persona's pinned items, oldest first."""
    persona = await _persona(ctx, principal, persona_id)
    return {"items": [pin_json(p) for p in await ctx.call(ctx.store.pins, persona)]}


@router.post("/personas/{persona_id}/pins", status_code=201)
async def add_pin(persona_id: str, body: PinRequest, ctx: Ctx,
                  principal: Memory) -> dict[str, Any]:
    """Pin an item (the existing one when the text is pinned already); a sixth is refused
    (409 with the store's code)."""
    persona = await _persona(ctx, principal, persona_id)
    try:
        return pin_json(await ctx.call(ctx.store.pin, persona, body.text))
    except PinLimitError as exc:
        raise Conflict(f"{exc.message}; remove one first (DELETE .../pins/ID)",
                       code=exc.code) from None


@router.delete("/personas/{persona_id}/pins/{pin_id}")
async def remove_pin(persona_id: str, pin_id: int, ctx: Ctx,
                     principal: Memory) -> dict[str, Any]:
    """Remove one of the persona's pinned items."""
    persona = await _persona(ctx, principal, persona_id)
    if not await ctx.call(ctx.store.unpin, persona, pin_id):
        raise ResourceNotFound(f"persona {persona!r} has no pinned item #{pin_id}")
    return {"removed": pin_id}
