"""``/v1/personas``: the personas the server serves, each of a tenant."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from sea.errors import AlreadyExists, InvalidRequest
from sea.serve.context import ServeContext
from sea.serve.deps import Admin, Ctx, Reader
from sea.serve.records import PersonaRow, ThreadRow

router = APIRouter(prefix="/v1", tags=["personas"])
_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class PersonaCreate(BaseModel):
    """``POST /v1/personas``."""

    model_config = ConfigDict(extra="forbid")
    id: str
    name: str = Field(min_length=1, max_length=200)
    system_prompt: str = Field(default="", max_length=20_000)
    metadata: dict[str, Any] = {}


def persona_json(row: PersonaRow) -> dict[str, Any]:
    """A persona as the API shows it."""
    return {"id": row.id, "name": row.name, "tenant": row.tenant,
            "system_prompt": row.system_prompt, "metadata": row.metadata,
            "created_at": row.created_at}


@router.get("/personas")
async def list_personas(limit: int = 100, offset: int = 0,
                        *, ctx: Ctx,
                        principal: Reader) -> dict[str, Any]:
    """The personas the key may reach."""
    rows = await ctx.call(ctx.records.personas, principal.tenant, limit=limit, offset=offset)
    return {"items": [persona_json(r) for r in rows if principal.sees(r.id, r.tenant)]}


@router.post("/personas", status_code=201)
async def create_persona(body: PersonaCreate, ctx: Ctx,
                         principal: Admin) -> dict[str, Any]:
    """Add a persona to the key's tenant."""
    if not _ID.match(body.id):
        raise InvalidRequest("a persona id is 1-64 letters, digits, '_', '.' or '-'")
    if not principal.sees(body.id, principal.tenant):
        raise InvalidRequest(f"this key may not reach a persona named {body.id!r}")
    if await ctx.call(ctx.records.persona, body.id) is not None:
        raise AlreadyExists(f"persona {body.id!r} exists already")
    row = PersonaRow(body.id, principal.tenant, body.name, body.system_prompt, body.metadata)
    return persona_json(await ctx.call(ctx.records.add_persona, row))


@router.get("/personas/{persona_id}")
async def get_persona(persona_id: str, ctx: Ctx,
                      principal: Reader) -> dict[str, Any]:
    """One persona."""
    return persona_json(await ctx.visible_persona(principal, persona_id))


async def main_conversation(ctx: ServeContext, persona: PersonaRow) -> ThreadRow:
    """The conversation of a persona's main memory thread (SEA's own pulses run there
    unless they name a thread), made on first use."""
    thread_id = f"{persona.id}.main"
    found = await ctx.call(ctx.records.thread, thread_id)
    if found is not None:
        return found
    main = await ctx.call(ctx.store.main_thread, persona.id)
    row = ThreadRow(thread_id, persona.id, persona.tenant, main.id,
                    {"persona": persona.id, "main": True})
    return await ctx.call(ctx.records.add_thread, row)
