"""``/v1/pulses/{pulse_id}/trace``: the recorded trace of a pulse.

This server records no traces yet (``sea run --record FILE`` records one, ``sea replay``
replays it): the route answers 404 with SEA891 saying so, for a pulse the key may see;
a pulse it may not see answers the same 404 as an unknown one (SEA820).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from sea.errors import ResourceNotFound, TraceNotRecorded
from sea.serve.deps import Ctx, Reader

router = APIRouter(prefix="/v1", tags=["pulses"])


@router.get("/pulses/{pulse_id}/trace")
async def trace(pulse_id: str, ctx: Ctx, principal: Reader) -> dict[str, Any]:
    """The pulse's trace (``schemas/trace.schema.json``), when the server recorded one."""
    rows = await ctx.call(ctx.records.pulse_runs, pulse_id)
    if not rows or not principal.sees(rows[0].persona, rows[0].tenant):
        raise ResourceNotFound(f"pulse {pulse_id!r} not found")
    raise TraceNotRecorded(f"pulse {pulse_id!r} has no recorded trace: this server does "
                           "not record pulses' traces")
