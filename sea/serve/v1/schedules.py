"""``/v1/schedules``: playbooks the workers run for a persona every so often.

The schedules of ``sea schedule``, kept by the workers' queue in the PostgreSQL store the
server serves (``sea worker`` processes run them). A server on a SQLite store has no queue:
these routes answer 409 (SEA890) saying so. A key sees and removes the schedules of the
personas it may reach; adding and removing need the ``admin`` role.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from saimemory.records import Persona
from sea.errors import ResourceNotFound, ServerLacks, UsageError
from sea.serve.auth import Principal
from sea.serve.context import ServeContext
from sea.serve.deps import Admin, Ctx, Reader

if TYPE_CHECKING:  # the queue's modules are imported when a route uses them
    from sea.queue.records import Schedule

router = APIRouter(prefix="/v1", tags=["schedules"])
T = TypeVar("T")


class ScheduleRequest(BaseModel):
    """``POST /v1/schedules``: as ``sea schedule add``."""

    model_config = ConfigDict(extra="forbid")
    persona: str
    playbook: str = Field(min_length=1, max_length=200)
    every: str = Field(description="how often: 30s, 10m, 2h, 1d")
    input: str = Field(default="", max_length=20_000)
    min_every: str = "1s"
    max_every: str = "366d"


async def with_queue(ctx: ServeContext, work: Callable[[Any], Awaitable[T]], *,
                     install: bool = True) -> T:
    """Run ``work(queue)`` on the store's queue, open for as long as it runs.

    Raises:
        ServerLacks: the store is not PostgreSQL (no queue).
    """
    if ctx.db.backend != "postgres":
        raise ServerLacks("schedules are run by sea worker processes from the queue in a "
                          "PostgreSQL store; this server's store is SQLite: start sea serve "
                          "(and sea worker) with --db postgresql://...")
    from sea.queue import PulseQueue

    queue = PulseQueue(ctx.db.location)
    await queue.open(install=install)
    try:
        return await work(queue)
    finally:
        await queue.close()


async def _visible(ctx: ServeContext, principal: Principal) -> list[Schedule]:
    from sea.queue.db import NO_QUEUE

    async def read(queue: Any) -> list[Schedule]:
        found: list[Schedule] = await queue.schedules()
        return found

    try:
        every = await with_queue(ctx, read, install=False)
    except UsageError as exc:
        if exc.code == NO_QUEUE:  # nothing was ever queued here
            return []
        raise
    rows = {row.id: row for row in await ctx.call(
        ctx.records.personas, principal.tenant, limit=10_000)}
    return [s for s in every if s.persona.id in rows
            and principal.sees(s.persona.id, rows[s.persona.id].tenant)]


@router.get("/schedules")
async def list_schedules(ctx: Ctx, principal: Reader,
                         persona: str | None = None) -> dict[str, Any]:
    """The schedules of the key's personas (of ``persona``), by when they are next due."""
    found = await _visible(ctx, principal)
    return {"items": [s.to_json() for s in found
                      if persona is None or s.persona.id == persona]}


@router.post("/schedules", status_code=201)
async def add_schedule(body: ScheduleRequest, ctx: Ctx, principal: Admin) -> dict[str, Any]:
    """Run ``playbook`` for ``persona`` every ``every`` on the workers (a run that falls
    due while the persona is busy is skipped)."""
    from sea.queue.records import IntervalBounds, interval_seconds, parse_every

    row = await ctx.visible_persona(principal, body.persona)
    bounds = IntervalBounds(interval_seconds(body.min_every, "min_every"),
                            interval_seconds(body.max_every, "max_every"))
    every = parse_every(body.every, bounds, "every")
    await ctx.call(ctx.library.get, body.playbook)
    persona = Persona(row.id, row.name, row.system_prompt)

    async def add(queue: Any) -> Schedule:
        made: Schedule = await queue.add_schedule(persona, body.playbook, every,
                                                  input=body.input, bounds=bounds)
        return made

    return (await with_queue(ctx, add)).to_json()


@router.delete("/schedules/{schedule_id}")
async def remove_schedule(schedule_id: str, ctx: Ctx, principal: Admin) -> dict[str, Any]:
    """Stop a schedule (pulses it already submitted run as usual)."""
    if schedule_id not in {s.id for s in await _visible(ctx, principal)}:
        raise ResourceNotFound(f"schedule {schedule_id!r} not found")

    async def remove(queue: Any) -> None:
        await queue.remove_schedule(schedule_id)

    await with_queue(ctx, remove, install=False)
    return {"removed": schedule_id}
