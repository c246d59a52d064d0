"""``/v1/regression``: recorded traces replayed against the playbooks as they are now.

The traces are the ``*.json`` files of the directory the server was started with
(``sea serve --traces DIR``: files ``sea run --record`` wrote, or the studio downloaded from
``/v1/pulses/{id}/trace``). ``GET`` lists them; ``POST .../replay`` replays one (``name``)
as ``sea replay`` does (models and tools answered from the trace, a fresh store, the
server's playbook library) and says whether it matched or, else, the step it diverged at
and what was expected there and what came instead.

Both need the ``author`` role: replaying is the author's check of edited playbooks (the
role ``sea keys`` gives "replay"), it spends the server's time on every call, and a trace
holds a persona's conversation and prompts. A trace is listed and replayed only for a key
that sees its persona (its tenant's, by the key's patterns; a persona the server does not
know counts as the default tenant's). Without ``--traces`` the routes answer 409 (SEA890).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from saimemory.base import DEFAULT_BUDGET
from sea.errors import InvalidRequest, ResourceNotFound, SeaError, ServerLacks
from sea.serve.auth import Principal, require
from sea.serve.context import DEFAULT_TENANT, ServeContext
from sea.serve.deps import Ctx
from sea.serve.v1.common import Options
from sea.trace.format import Trace
from sea.trace.replay import areplay, load_trace

router = APIRouter(prefix="/v1", tags=["regression"])
Author = Annotated[Principal, Depends(require("author"))]
MAX_TRACES = 500
"""The most trace files listed."""


class ReplayRequest(BaseModel):
    """``POST /v1/regression/replay``: the trace file to replay (its name in the
    directory)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=255)


def _directory(traces: Path | None) -> Path:
    if traces is None:
        raise ServerLacks("this server has no trace directory: start sea serve with --traces "
                          "DIR (a directory of traces sea run --record wrote)")
    return traces


async def _visible(ctx: ServeContext, principal: Principal, trace: Trace) -> bool:
    row = await ctx.call(ctx.records.persona, trace.persona.id)
    return principal.sees(trace.persona.id, row.tenant if row else DEFAULT_TENANT)


def _summary(name: str, trace: Trace) -> dict[str, Any]:
    return {"name": name, "pulse_id": trace.pulse_id, "persona": trace.persona.id,
            "playbook": trace.playbook, "recorded_at": trace.recorded_at,
            "status": trace.status, "input": trace.input[:200]}


@router.get("/regression")
async def list_traces(ctx: Ctx, options: Options, principal: Author) -> dict[str, Any]:
    """The directory's traces the key may replay, by name (files that are not traces are
    listed with the error that says why)."""
    directory = _directory(options.traces)
    paths = sorted(directory.glob("*.json"))[:MAX_TRACES]
    items: list[dict[str, Any]] = []
    for path in paths:
        try:
            trace = await ctx.call(load_trace, path)
        except SeaError as exc:
            items.append({"name": path.name, "error": {"code": exc.code,
                                                       "message": exc.message.replace(
                                                           str(directory) + "/", "")}})
            continue
        if await _visible(ctx, principal, trace):
            items.append(_summary(path.name, trace))
    return {"items": items}


@router.post("/regression/replay")
async def replay(body: ReplayRequest, ctx: Ctx, options: Options,
                 principal: Author) -> dict[str, Any]:
    """Replay one trace against the server's playbooks as they are now: matched, or the
    step it diverged at with the expected and actual values there."""
    directory = _directory(options.traces)
    if "/" in body.name or "\\" in body.name or body.name.startswith(".") \
            or not body.name.endswith(".json"):
        raise InvalidRequest(f"{body.name!r} is not the name of a trace file of the "
                             "directory (NAME.json, as GET /v1/regression lists them)")
    path = directory / body.name
    if not path.is_file():
        raise ResourceNotFound(f"no trace {body.name!r}")
    trace = await ctx.call(load_trace, path)
    if not await _visible(ctx, principal, trace):
        raise ResourceNotFound(f"no trace {body.name!r}")
    report = await ctx.call(lambda: asyncio.run(
        areplay(trace, ctx.library, budget=DEFAULT_BUDGET)))
    divergence = report.divergence
    return {**_summary(body.name, trace), "matched": report.matched, "step": report.step,
            "divergence": divergence.to_json() if divergence else None,
            "described": divergence.describe() if divergence else None,
            "changed_playbooks": sorted(report.changed_playbooks),
            "nodes": len(report.actual.nodes), "llm_calls": len(report.actual.llm_calls),
            "tool_calls": len(report.actual.tool_calls)}
