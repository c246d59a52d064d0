"""``/v1/approvals``: the inbox of every waiting pulse a key may answer.

An item is a conversation whose pulse waits for an approval: its pulse, persona, thread,
the request SEA asks (``request``) and since when. ``GET /v1/approvals/stream`` sends the
inbox (``event: inbox``) when it changes, read from the server's tables (so it sees pulses
of every server process on the database), with keep-alives between.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from sea.serve import sse
from sea.serve.auth import Principal
from sea.serve.context import ServeContext
from sea.serve.deps import Approver, Ctx

router = APIRouter(prefix="/v1", tags=["approvals"])
POLL_S = 1.0


def request_kind(request: dict[str, Any]) -> str:
    """What a request asks about: ``plan`` (a plan's specs), ``actions`` (an ``actions``
    node's plan: its model's ``{"actions": [...], "reason"}``), ``exec`` (a playbook to
    run) or ``tool`` (a gated tool call)."""
    if isinstance(request.get("specs"), list):
        return "plan"
    if isinstance(request.get("plan"), list | dict):
        return "actions"
    if request.get("playbook_name") is not None:
        return "exec"
    return "tool"


async def inbox(ctx: ServeContext, principal: Principal,
                persona: str | None = None) -> list[dict[str, Any]]:
    """Every waiting request the key may answer, newest first."""
    rows = await ctx.call(ctx.records.threads, principal.tenant, status="interrupted",
                          limit=10_000)
    items = []
    for row in rows:
        if not principal.sees(row.persona, row.tenant) or (persona and row.persona != persona):
            continue
        for interrupt in row.interrupts:
            request = dict(interrupt["value"].get("sea", {}))
            items.append({"pulse_id": row.waiting_pulse, "thread_id": row.thread_id,
                          "persona": row.persona, "playbook": request.get("playbook"),
                          "node": request.get("node"), "kind": request_kind(request),
                          "interrupt_id": interrupt["id"], "request": request,
                          "waiting_since": row.updated_at})
    return items


@router.get("/approvals")
async def list_approvals(persona: str | None = None, *, ctx: Ctx,
                         principal: Approver) -> dict[str, Any]:
    """The approvals inbox."""
    return {"items": await inbox(ctx, principal, persona)}


@router.get("/approvals/stream", response_class=StreamingResponse)
async def stream(request: Request, persona: str | None = None,
                 *, ctx: Ctx,
                 principal: Approver) -> StreamingResponse:
    """The inbox now, then again whenever it changes (SSE)."""

    async def body() -> AsyncIterator[bytes]:
        last: bytes | None = None
        seq = 0
        quiet = 0.0
        while True:
            items = await inbox(ctx, principal, persona)
            encoded = orjson.dumps(items)
            if encoded != last:
                seq += 1
                last = encoded
                quiet = 0.0
                yield sse.encode(str(seq), "inbox", {"items": items})
            elif quiet >= ctx.settings.keepalive_s:
                quiet = 0.0
                yield sse.KEEPALIVE
            await asyncio.sleep(POLL_S)
            quiet += POLL_S

    return sse.response(body())
