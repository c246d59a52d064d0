"""Runs without a thread (``POST /runs``, ``/runs/stream``, ``/runs/wait``) and the
thread-level stream (``GET /threads/{id}/stream``).

A run without a thread starts a new conversation of the persona ``metadata.persona`` names
(else the default one), as ``POST /threads`` would, and runs in it: the conversation stays
(SAIMemory is append-only), and the run's ``Content-Location`` names it.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Response
from fastapi.responses import JSONResponse, StreamingResponse

from sea.errors import ResourceNotFound
from sea.serve import sse
from sea.serve.compat.requests import RunCreate
from sea.serve.compat.runs import begin, final_values, run_json, stream_of, where
from sea.serve.compat.stream import modes_of
from sea.serve.compat.threads import new_conversation
from sea.serve.deps import Ctx, Reader, Runner

router = APIRouter(tags=["runs"])


@router.post("/runs")
async def create(body: RunCreate, response: Response, ctx: Ctx,
                 principal: Runner) -> dict[str, Any]:
    """Start a run in a new conversation, in the background."""
    thread = await new_conversation(ctx, principal, str(uuid.uuid4()), dict(body.metadata or {}))
    row = await begin(ctx, principal, thread, body)
    response.headers["Content-Location"] = where(row)
    return run_json(row)


@router.post("/runs/stream", response_class=StreamingResponse)
async def stream(body: RunCreate, ctx: Ctx, principal: Runner) -> StreamingResponse:
    """Start a run in a new conversation and stream its events (SSE)."""
    thread = await new_conversation(ctx, principal, str(uuid.uuid4()), dict(body.metadata or {}))
    row = await begin(ctx, principal, thread, body)
    cancel = (body.on_disconnect or ("continue" if body.stream_resumable else "cancel")) \
        == "cancel"
    events = stream_of(ctx, row, thread, modes_of(body.stream_mode), None,
                       cancel_on_disconnect=cancel)
    return sse.response(events, {"Content-Location": where(row)})


@router.post("/runs/wait")
async def wait(body: RunCreate, ctx: Ctx, principal: Runner) -> JSONResponse:
    """Start a run in a new conversation; its final state when it ends."""
    thread = await new_conversation(ctx, principal, str(uuid.uuid4()), dict(body.metadata or {}))
    row = await begin(ctx, principal, thread, body)
    return JSONResponse(await final_values(ctx, row), headers={"Content-Location": where(row)})


@router.get("/threads/{thread_id}/stream", response_class=StreamingResponse)
async def join_thread(
    thread_id: str, ctx: Ctx, principal: Reader,
    stream_mode: Annotated[list[str] | None, Query()] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> StreamingResponse:
    """Follow the conversation's newest run (SSE), after ``Last-Event-ID``."""
    thread = await ctx.visible_thread(principal, thread_id)
    rows = await ctx.call(ctx.records.runs, thread.thread_id, limit=1)
    if not rows:
        raise ResourceNotFound(f"thread {thread_id!r} has no run to follow")
    asked = [mode for mode in stream_mode or () if mode]
    modes = modes_of(asked or rows[0].kwargs.get("stream_mode"))
    events = stream_of(ctx, rows[0], thread, modes, last_event_id, cancel_on_disconnect=False)
    return sse.response(events, {"Content-Location": where(rows[0])})
