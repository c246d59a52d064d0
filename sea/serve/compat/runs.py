"""Runs: a LangGraph run is a pulse (or the resume of a waiting one) in a conversation.

A run runs as a task of the server (:mod:`sea.serve.hub`); ``/runs/stream`` and
``/runs/{id}/stream`` subscribe to its event log, so a dropped stream is rejoined with
``Last-Event-ID`` and misses nothing. ``on_disconnect=cancel`` (the default of a stream
that is not resumable) cancels the run when its stream's client goes away.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Response
from fastapi.responses import JSONResponse, StreamingResponse

from sea.errors import ResourceNotFound, RunConflict
from sea.serve import sse
from sea.serve.auth import Principal
from sea.serve.compat.assistants import assistant
from sea.serve.compat.history import check_head
from sea.serve.compat.requests import (
    RunCreate,
    args_of,
    check_supported,
    is_answer,
    user_message,
)
from sea.serve.compat.stream import CompatStream, modes_of, position
from sea.serve.context import ServeContext
from sea.serve.deps import Ctx, Reader, Runner
from sea.serve.hub import StartRequest
from sea.serve.records import RunRow, ThreadRow
from sea.serve.thread_state import answer_of

router = APIRouter(tags=["runs"])
GONE = 999_999_999
"""The sequence of the events that stand for a log no longer kept."""


def run_json(row: RunRow) -> dict[str, Any]:
    """A run as LangGraph's ``Run``."""
    return {"run_id": row.run_id, "thread_id": row.thread_id,
            "assistant_id": row.kwargs.get("assistant_id", row.assistant),
            "created_at": row.created_at, "updated_at": row.updated_at, "status": row.status,
            "metadata": row.metadata, "kwargs": row.kwargs,
            "multitask_strategy": row.kwargs.get("multitask_strategy", "reject")}


def where(row: RunRow) -> str:
    """The run's path (its ``Content-Location``)."""
    return f"/threads/{row.thread_id}/runs/{row.run_id}"


async def begin(ctx: ServeContext, principal: Principal, thread: ThreadRow,
                body: RunCreate) -> RunRow:
    """Start the run a request asks for: a new pulse, or the answer to a waiting one.

    Raises:
        SeaError: the request cannot be served (see :mod:`sea.serve.compat.requests`).
    """
    check_supported(body)
    found = await ctx.call(assistant, ctx, body.assistant_id)
    kwargs = {"assistant_id": found.assistant_id, "graph_id": found.graph_id,
              "stream_mode": list(modes_of(body.stream_mode)),
              "multitask_strategy": body.multitask_strategy,
              "stream_resumable": body.stream_resumable}
    metadata = dict(body.metadata or {})
    if not {"graph_id", "assistant_id"} <= set(thread.metadata):
        merged = {"graph_id": found.graph_id, "assistant_id": found.assistant_id,
                  **thread.metadata}
        await ctx.call(ctx.records.update_thread, thread.thread_id, metadata=merged)
    if is_answer(body):
        if not principal.has("approve"):
            raise HTTPException(403, "answering a waiting pulse needs the 'approve' role")
        command = body.command or {}
        requests = [dict(item["value"].get("sea", {})) for item in thread.interrupts]
        answer = (answer_of(command["resume"], principal.name, requests)
                  if "resume" in command else
                  {"approved": False, "approver": principal.name,
                   "reason": "marked as resolved"})
        return await ctx.hub.resume(thread, answer, assistant=found.graph_id,
                                    metadata=metadata, kwargs=kwargs,
                                    multitask=body.multitask_strategy)
    await check_head(ctx, thread, body.checkpoint, body.checkpoint_id)
    text, uid, input_metadata = user_message(body)
    args = args_of(body, found.playbook)
    persona = await ctx.visible_persona(principal, thread.persona)
    ask = StartRequest(found.playbook.name, found.graph_id, text, uid, input_metadata, args,
                       metadata, kwargs, body.multitask_strategy)
    return await ctx.hub.start(thread, persona, ask)


def stream_of(ctx: ServeContext, row: RunRow, thread: ThreadRow, modes: tuple[str, ...],
              last_event_id: str | None, *, cancel_on_disconnect: bool) -> Any:
    """The run's events as LangGraph SSE, after ``last_event_id``."""
    seen = position(last_event_id)
    mapper = CompatStream(modes)

    async def missing() -> list[sse.Part]:  # the log is gone: the final state
        fresh = await ctx.call(ctx.records.thread, thread.thread_id) or thread
        values = await ctx.hub.values(fresh)
        if fresh.interrupts:
            values["__interrupt__"] = fresh.interrupts
        done = await ctx.call(ctx.records.run, row.run_id) or row
        end: sse.Part = (f"{GONE}-2", "end", None)
        if done.status == "error" and done.error:
            end = (f"{GONE}-2", "error", {"error": done.error.get("code"),
                                          "message": done.error.get("message")})
        return [(f"{GONE}-0", "metadata", {"run_id": row.run_id, "attempt": 1}),
                (f"{GONE}-1", "values", values), end]

    def gone() -> None:
        ctx.hub.cancel(row.run_id)

    return sse.follow(ctx.log, row.run_id, mapper.parts,
                      skip=lambda event_id: position(event_id) <= seen,
                      keepalive_s=ctx.settings.keepalive_s, missing=missing,
                      on_disconnect=gone if cancel_on_disconnect else None)


@router.post("/threads/{thread_id}/runs")
async def create(thread_id: str, body: RunCreate, response: Response,
                 ctx: Ctx,
                 principal: Runner) -> dict[str, Any]:
    """Start a run in the background."""
    thread = await ctx.visible_thread(principal, thread_id)
    row = await begin(ctx, principal, thread, body)
    response.headers["Content-Location"] = where(row)
    return run_json(row)


@router.post("/threads/{thread_id}/runs/stream", response_class=StreamingResponse)
async def stream(thread_id: str, body: RunCreate, ctx: Ctx,
                 principal: Runner) -> StreamingResponse:
    """Start a run and stream its events (SSE)."""
    thread = await ctx.visible_thread(principal, thread_id)
    row = await begin(ctx, principal, thread, body)
    cancel = (body.on_disconnect or ("continue" if body.stream_resumable else "cancel")) \
        == "cancel"
    headers = {"Content-Location": where(row)}
    if body.stream_resumable:
        headers["Location"] = f"{where(row)}/stream"
    body_events = stream_of(ctx, row, thread, modes_of(body.stream_mode), None,
                            cancel_on_disconnect=cancel)
    return sse.response(body_events, headers)


async def final_values(ctx: ServeContext, row: RunRow) -> dict[str, Any]:
    """The run's conversation's values once the run ended (``__error__`` when it failed)."""
    await ctx.hub.wait(row.run_id)
    done = await ctx.call(ctx.records.run, row.run_id) or row
    thread = await ctx.call(ctx.records.thread, row.thread_id)
    if thread is None:
        raise ResourceNotFound(f"thread {row.thread_id!r} not found")
    values = await ctx.hub.values(thread)
    if thread.interrupts:
        values["__interrupt__"] = thread.interrupts
    if done.status == "error":
        error = done.error or {}
        values["__error__"] = {"error": error.get("code", "SEA500"),
                               "message": error.get("message", "the pulse failed")}
    return values


@router.post("/threads/{thread_id}/runs/wait")
async def wait(thread_id: str, body: RunCreate, ctx: Ctx,
               principal: Runner) -> JSONResponse:
    """Start a run and answer its final state when it ends."""
    thread = await ctx.visible_thread(principal, thread_id)
    row = await begin(ctx, principal, thread, body)
    return JSONResponse(await final_values(ctx, row), headers={"Content-Location": where(row)})


async def _visible_run(ctx: ServeContext, principal: Principal, thread_id: str,
                       run_id: str) -> tuple[ThreadRow, RunRow]:
    thread = await ctx.visible_thread(principal, thread_id)
    row = await ctx.call(ctx.records.run, run_id)
    if row is None or row.thread_id != thread.thread_id:
        raise ResourceNotFound(f"run {run_id!r} not found in thread {thread_id!r}")
    return thread, row


@router.get("/threads/{thread_id}/runs")
async def list_runs(thread_id: str, limit: int = 10, offset: int = 0,
                    status: str | None = None, *, ctx: Ctx,
                    principal: Reader) -> list[dict[str, Any]]:
    """The conversation's runs, newest first."""
    await ctx.visible_thread(principal, thread_id)
    rows = await ctx.call(ctx.records.runs, thread_id, status=status, limit=limit,
                          offset=offset)
    return [run_json(row) for row in rows]


@router.get("/threads/{thread_id}/runs/{run_id}")
async def get(thread_id: str, run_id: str, ctx: Ctx,
              principal: Reader) -> dict[str, Any]:
    """One run."""
    return run_json((await _visible_run(ctx, principal, thread_id, run_id))[1])


@router.delete("/threads/{thread_id}/runs/{run_id}", status_code=204)
async def delete(thread_id: str, run_id: str, ctx: Ctx,
                 principal: Runner) -> Response:
    """Runs are the record of pulses: they are not deleted (409 while one runs)."""
    _, row = await _visible_run(ctx, principal, thread_id, run_id)
    raise RunConflict(f"run {row.run_id!r} is the record of a pulse and stays; delete its "
                      "thread to forget it")


@router.post("/threads/{thread_id}/runs/{run_id}/cancel")
async def cancel(thread_id: str, run_id: str, wait: bool = False, action: str = "interrupt",
                 *, ctx: Ctx,
                 principal: Runner) -> dict[str, Any]:
    """Cancel a run (it ends ``interrupted``; a partly streamed reply is not stored)."""
    _, row = await _visible_run(ctx, principal, thread_id, run_id)
    if ctx.hub.cancel(row.run_id) and wait:
        await ctx.hub.wait(row.run_id)
    done = await ctx.call(ctx.records.run, row.run_id)
    return run_json(done or row)


@router.get("/threads/{thread_id}/runs/{run_id}/join")
async def join(thread_id: str, run_id: str, ctx: Ctx,
               principal: Reader) -> dict[str, Any]:
    """Wait for the run to end; its conversation's final state."""
    _, row = await _visible_run(ctx, principal, thread_id, run_id)
    return await final_values(ctx, row)


@router.get("/threads/{thread_id}/runs/{run_id}/stream", response_class=StreamingResponse)
async def join_stream(
    thread_id: str, run_id: str,
    stream_mode: Annotated[list[str] | None, Query()] = None,
    cancel_on_disconnect: bool = False,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    *, ctx: Ctx,
    principal: Reader,
) -> StreamingResponse:
    """Follow a run's events (SSE): those after ``Last-Event-ID``, then live."""
    thread, row = await _visible_run(ctx, principal, thread_id, run_id)
    asked = [mode for mode in stream_mode or () if mode]  # the SDK sends `stream_mode=`
    modes = modes_of(asked or row.kwargs.get("stream_mode"))
    body = stream_of(ctx, row, thread, modes, last_event_id,
                     cancel_on_disconnect=cancel_on_disconnect)
    return sse.response(body, {"Content-Location": where(row)})
