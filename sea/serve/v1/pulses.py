"""``/v1/pulses``: SEA's own pulse API, with SEA's events as they are.

A pulse starts in a persona's conversation (``thread_id``) or its main memory thread;
``Accept: text/event-stream`` streams its events (``id:`` = the log's sequence number,
``event:`` = SEA's event kind), else the answer is ``202`` with its ids. Its events can be
followed (and rejoined with ``Last-Event-ID``) at ``/v1/pulses/{id}/events``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from sea.errors import InvalidRequest, NotInterrupted, ResourceNotFound
from sea.serve import sse
from sea.serve.auth import Principal
from sea.serve.context import ServeContext
from sea.serve.deps import Approver, Ctx, Reader, Runner
from sea.serve.eventlog import Entry
from sea.serve.hub import StartRequest
from sea.serve.records import RunRow
from sea.serve.thread_state import answer_of
from sea.serve.v1.personas import main_conversation

BUDGET_FIELDS = ("max_calls", "max_tokens_in", "max_tokens_out", "max_cost")

router = APIRouter(prefix="/v1", tags=["pulses"])


class PulseStart(BaseModel):
    """``POST /v1/personas/{id}/pulses``."""

    model_config = ConfigDict(extra="forbid")
    input: str = Field(min_length=1)
    playbook: str | None = None
    args: dict[str, Any] = {}
    thread_id: str | None = None
    when_busy: str = Field(default="fail", pattern="^(fail|wait)$")
    priority: Literal["user", "autonomous", "scheduled"] = "user"
    """A person's turn by default: a pulse of higher priority makes a running one of lower
    priority of the persona stop at its next node (and is not refused for it)."""


class PulseAnswer(BaseModel):
    """``POST /v1/pulses/{id}/resume``: SEA's answer (true/false, ``{"ids": [...]}``,
    ``{"up_to": "low"}``, ...) and why."""

    model_config = ConfigDict(extra="forbid")
    answer: Any
    reason: str = ""


def native_parts(entry: Entry) -> list[sse.Part]:
    """A log entry as SEA's own SSE event (the hub's ``values`` snapshots are left out)."""
    if entry.kind == "values":
        return []
    return [(str(entry.seq), entry.kind, entry.data)]


def pulse_json(rows: list[RunRow]) -> dict[str, Any]:
    """A pulse: its runs (first the start, then each resume) summed up, and the answers
    its waits were given (``decisions``: each resume's recorded answer, with the approver,
    and when it was given)."""
    first, last = rows[0], rows[-1]
    return {"id": first.pulse_id, "persona": first.persona, "thread_id": first.thread_id,
            "playbook": first.playbook, "status": last.status,
            "pulse_status": (last.result or {}).get("pulse_status"), "error": last.error,
            "created_at": first.created_at, "updated_at": last.updated_at,
            "runs": [row.run_id for row in rows],
            "decisions": [{"run_id": row.run_id, "at": row.created_at,
                           "answer": row.kwargs["answer"]}
                          for row in rows if "answer" in row.kwargs]}


async def _pulse_rows(ctx: ServeContext, principal: Principal, pulse_id: str) -> list[RunRow]:
    rows = await ctx.call(ctx.records.pulse_runs, pulse_id)
    if not rows or not principal.sees(rows[0].persona, rows[0].tenant):
        raise ResourceNotFound(f"pulse {pulse_id!r} not found")
    return rows


def _follow(ctx: ServeContext, row: RunRow, after: int) -> StreamingResponse:
    async def missing() -> list[sse.Part]:
        done = await ctx.call(ctx.records.run, row.run_id) or row
        return [("0", "end", {"status": (done.result or {}).get("pulse_status"),
                              "error": done.error})]

    body = sse.follow(ctx.log, row.run_id, native_parts, start=after,
                      keepalive_s=ctx.settings.keepalive_s, missing=missing)
    return sse.response(body, {"Content-Location": f"/v1/pulses/{row.pulse_id}"})


@router.post("/personas/{persona_id}/pulses", status_code=202, response_model=None)
async def start(persona_id: str, body: PulseStart, request: Request,
                ctx: Ctx,
                principal: Runner) -> Any:
    """Start a pulse; its events (SSE) or ``202 {pulse_id, run_id, links}``."""
    persona = await ctx.visible_persona(principal, persona_id)
    if body.thread_id is None:
        thread = await main_conversation(ctx, persona)
    else:
        thread = await ctx.visible_thread(principal, body.thread_id)
        if thread.persona != persona.id:
            raise InvalidRequest(f"thread {body.thread_id!r} is a conversation of another "
                                 "persona")
    playbook = body.playbook or ctx.settings.default_playbook
    await ctx.call(ctx.library.get, playbook)
    strategy = "enqueue" if body.when_busy == "wait" else "reject"
    ask = StartRequest(playbook, playbook, body.input, args=body.args,
                       kwargs={"native": True, "priority": body.priority}, multitask=strategy,
                       priority=body.priority)
    row = await ctx.hub.start(thread, persona, ask)
    if "text/event-stream" in request.headers.get("accept", ""):
        return _follow(ctx, row, 0)
    return JSONResponse({"pulse_id": row.pulse_id, "run_id": row.run_id, "status": row.status,
                         "links": {"self": f"/v1/pulses/{row.pulse_id}",
                                   "events": f"/v1/pulses/{row.pulse_id}/events"}}, 202)


@router.get("/pulses")
async def list_pulses(persona: str | None = None, limit: int = 50,
                      *, ctx: Ctx,
                      principal: Reader) -> dict[str, Any]:
    """The newest runs of pulses the key may see."""
    rows = await ctx.call(ctx.records.pulses, principal.tenant, persona=persona, limit=limit)
    return {"items": [pulse_json([r]) | {"run_id": r.run_id} for r in rows
                      if principal.sees(r.persona, r.tenant)]}


@router.get("/pulses/{pulse_id}")
async def show(pulse_id: str, ctx: Ctx,
               principal: Reader) -> dict[str, Any]:
    """One pulse: its persona, playbook, status and runs, the answers given to it
    (``decisions``) and the bounds its model calls run under (``budget``: the server's;
    null where there is none) and its steps (``max_steps``)."""
    shown = pulse_json(await _pulse_rows(ctx, principal, pulse_id))
    limits = ctx.runtime.config.limits
    shown["budget"] = {name: getattr(limits.budget, name) for name in BUDGET_FIELDS}
    shown["max_steps"] = limits.max_steps
    return shown


@router.get("/pulses/{pulse_id}/events", response_class=StreamingResponse)
async def events(pulse_id: str, after: int | None = None,
                 last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
                 *, ctx: Ctx,
                 principal: Reader) -> StreamingResponse:
    """The events of the pulse's latest run (SSE), after ``Last-Event-ID`` (or
    ``after``), then live."""
    rows = await _pulse_rows(ctx, principal, pulse_id)
    start = after or 0
    if last_event_id:
        if not last_event_id.isdigit():
            raise InvalidRequest(f"Last-Event-ID {last_event_id!r} is not an id this "
                                 "stream sent")
        start = int(last_event_id)
    return _follow(ctx, rows[-1], start)


@router.post("/pulses/{pulse_id}/cancel")
async def cancel(pulse_id: str, ctx: Ctx,
                 principal: Runner) -> dict[str, bool]:
    """Cancel the pulse if it runs in this server."""
    rows = await _pulse_rows(ctx, principal, pulse_id)
    return {"cancelled": ctx.hub.cancel(rows[-1].run_id)}


@router.post("/pulses/{pulse_id}/resume", status_code=202, response_model=None)
async def resume(pulse_id: str, body: PulseAnswer, request: Request,
                 ctx: Ctx,
                 principal: Approver) -> Any:
    """Answer the pulse's approval request (the approver is the key's name)."""
    rows = await _pulse_rows(ctx, principal, pulse_id)
    thread = await ctx.visible_thread(principal, rows[0].thread_id)
    if thread.waiting_pulse != pulse_id:
        raise NotInterrupted(f"pulse {pulse_id!r} waits for no answer")
    requests = [dict(item["value"].get("sea", {})) for item in thread.interrupts]
    answer = answer_of(body.answer, principal.name, requests)
    if body.reason and isinstance(answer, dict):
        answer["reason"] = body.reason
    row = await ctx.hub.resume(thread, answer, assistant=rows[0].assistant, metadata={},
                               kwargs={"native": True})
    if "text/event-stream" in request.headers.get("accept", ""):
        return _follow(ctx, row, 0)
    return JSONResponse({"pulse_id": row.pulse_id, "run_id": row.run_id,
                         "status": row.status}, 202)
