"""``GET /info`` and ``GET /ok``: what a LangGraph client checks first."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from sea.serve.deps import Ctx

router = APIRouter(tags=["meta"])


@router.get("/ok")
async def ok() -> dict[str, bool]:
    """The server is up (no key needed: a health check)."""
    return {"ok": True}


@router.get("/info")
async def info(ctx: Ctx) -> dict[str, Any]:
    """The server's version and what it can do (no key needed: agent-chat-ui calls it
    before it has one)."""
    return {
        "version": ctx.settings.version,
        "server": "sea",
        "flags": {"assistants": True, "crons": False, "langsmith": False,
                  "thread_ttl": False, "store": False},
        "metadata": {"default_playbook": ctx.settings.default_playbook},
    }
