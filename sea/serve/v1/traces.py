"""``/v1/pulses/{pulse_id}/trace``: the trace of a pulse, to download.

The server logs every event of every run and keeps a run's log ``--log-ttl`` seconds after
its end. While the logs of a pulse's runs are kept, its trace (``schemas/trace.schema.json``,
what ``sea run --record`` writes and ``sea replay`` replays) is made from them
(:mod:`sea.trace.logged`: the earlier conversation is read from the store, the playbook
hashes are the current ones). Once they are dropped the route answers 404 with SEA891
saying so; a pulse the key may not see answers the same 404 as an unknown one (SEA820).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from saimemory import Persona
from sea.errors import ResourceNotFound, SeaError, TraceNotRecorded
from sea.serve.context import ServeContext
from sea.serve.deps import Ctx, Reader
from sea.serve.records import RunRow
from sea.trace.logged import trace_of_logged

router = APIRouter(prefix="/v1", tags=["pulses"])


async def logged_events(ctx: ServeContext, rows: list[RunRow]) -> list[dict[str, Any]] | None:
    """The logged events of every run of a pulse, in order; None when a run's log is
    dropped."""
    found: list[dict[str, Any]] = []
    for row in rows:
        after = 0
        while True:
            batch = await ctx.log.read(row.run_id, after, 0.0)
            if not batch.known:
                return None
            if not batch.entries:
                break
            found.extend(entry.data for entry in batch.entries if isinstance(entry.data, dict))
            after = batch.entries[-1].seq
    return found


def _hashes(ctx: ServeContext) -> Any:
    def hashes(names: list[str]) -> dict[str, str]:
        found = {}
        for name in names:
            try:
                found[name] = ctx.library.content_hash(name)
            except SeaError:  # a playbook removed since: no hash to give
                continue
        return found

    return hashes


@router.get("/pulses/{pulse_id}/trace")
async def trace(pulse_id: str, ctx: Ctx, principal: Reader) -> JSONResponse:
    """The pulse's trace (``schemas/trace.schema.json``), a file to download, while the
    server keeps its runs' events."""
    rows = await ctx.call(ctx.records.pulse_runs, pulse_id)
    if not rows or not principal.sees(rows[0].persona, rows[0].tenant):
        raise ResourceNotFound(f"pulse {pulse_id!r} not found")
    events = await logged_events(ctx, rows)
    if events is None:
        raise TraceNotRecorded(
            f"pulse {pulse_id!r} has no trace any more: the server keeps a run's events "
            "--log-ttl seconds after its end (record one as it runs with sea run --record "
            "FILE)")
    row = await ctx.call(ctx.records.persona, rows[0].persona)
    persona = Persona(rows[0].persona, row.name if row else rows[0].persona,
                      row.system_prompt if row else "")
    made = await ctx.call(
        trace_of_logged, events, persona=persona, playbook=rows[0].playbook,
        pulse_id=pulse_id, started=datetime.fromisoformat(rows[0].created_at),
        store=ctx.store, budget=ctx.runtime.config.history_budget, hashes=_hashes(ctx),
        playbook_dirs=[str(path) for path in ctx.library.dirs])
    body = made.model_dump(mode="json", by_alias=True, exclude={"schema_"})
    return JSONResponse(body, headers={
        "Content-Disposition": f'attachment; filename="pulse-{pulse_id}.trace.json"'})
