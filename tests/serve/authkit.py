"""What the key, auth and isolation tests share: the server's database on either backend,
and a small FastAPI app that guards its routes as ``sea serve`` does."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from sea.errors import ResourceNotFound, ServeError
from sea.serve.auth import Auth, Principal, require
from sea.serve.db import ServerDB
from sea.serve.security import error_body

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
"""``@pytest.fixture(params=BACKENDS)``: each test once on SQLite, once on PostgreSQL."""


@contextmanager
def server_db(backend: str, tmp_path: Path) -> Iterator[ServerDB]:
    """The server's database: a SQLite file in ``tmp_path``, or a schema of its own in the
    PostgreSQL database of ``SEA_TEST_POSTGRES_DSN`` (dropped at the end)."""
    if backend == "sqlite":
        opened = ServerDB(str(tmp_path / "memory.sqlite"))
        yield opened
        opened.close()
        return
    dsn = os.environ.get("SEA_TEST_POSTGRES_DSN")
    if not dsn:
        pytest.skip("SEA_TEST_POSTGRES_DSN is not set (a PostgreSQL server is needed)")
    schema = f"sea_auth_{uuid.uuid4().hex[:12]}"
    opened = ServerDB(f"{dsn}?schema={schema}")
    try:
        yield opened
    finally:
        opened.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        opened.close()


PERSONAS = {"acme-aoi": "acme", "acme-ren": "acme", "globex-kai": "globex", "aoi": "default"}
"""The demo app's personas and their tenants."""
THREADS = {"t-acme-1": "acme-aoi", "t-globex-1": "globex-kai"}
"""Its threads (conversations) and their personas."""

Reader = Annotated[Principal, Depends(require("read"))]
Runner = Annotated[Principal, Depends(require("run"))]
Approver = Annotated[Principal, Depends(require("approve"))]
Admin = Annotated[Principal, Depends(require("admin"))]


def demo_app(auth: Auth, *, leaky: bool = False, **flaws: bool) -> FastAPI:
    """A small app guarded as the real server is: every route depends on ``require(role)``
    and answers 404 for a persona the key does not see.

    Args:
        auth: The app's :class:`Auth`.
        leaky: One route forgets the tenant check (the isolation checker must notice).
        flaws: More routes, each with a flaw the checker must notice: ``unguarded`` (no
            role at all), ``tattling`` (another tenant's persona answered with a message
            of its own: it tells the persona exists), ``hidden`` (left out of the OpenAPI
            document), ``streaming`` (an event stream that never ends forgets the tenant
            check: the checker must not wait for its end).
    """
    app = FastAPI()
    app.state.auth = auth

    @app.exception_handler(ServeError)
    async def serve_error(request: Request, exc: ServeError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=exc.status,
                            headers=getattr(exc, "headers", None))

    app.include_router(_routes(leaky))
    for flaw, wanted in flaws.items():
        if wanted:
            app.include_router(FLAWED[flaw]())
    return app


def _unguarded() -> APIRouter:
    router = APIRouter()

    @router.get("/v1/personas/{persona_id}/memory")
    async def memory(persona_id: str) -> dict[str, str]:
        return {"persona": persona_id}

    return router


def _tattling() -> APIRouter:
    router = APIRouter()

    @router.get("/v1/personas/{persona_id}/stats")
    async def stats(persona_id: str, who: Reader) -> dict[str, str]:
        if PERSONAS.get(persona_id) not in (None, who.tenant):
            raise ResourceNotFound("that persona belongs to another tenant")
        return {"id": persona(who, persona_id)}

    return router


def _hidden() -> APIRouter:
    router = APIRouter()

    @router.get("/v1/secret", include_in_schema=False)
    async def secret() -> dict[str, str]:
        return {"secret": "s"}

    return router


def _streaming() -> APIRouter:
    router = APIRouter()

    @router.get("/threads/{thread_id}/stream")
    async def follow(thread_id: str, who: Reader) -> StreamingResponse:
        async def forever() -> AsyncIterator[bytes]:
            number = 0
            while True:
                yield f"id: {number}\nevent: values\ndata: {{}}\n\n".encode()
                number += 1
                await anyio.sleep(0.05)

        return StreamingResponse(forever(), media_type="text/event-stream")

    return router


FLAWED = {"unguarded": _unguarded, "tattling": _tattling, "hidden": _hidden,
          "streaming": _streaming}


def persona(principal: Principal, persona_id: str) -> str:
    """The persona's id, if the principal sees it; else 404, as for an unknown one."""
    tenant = PERSONAS.get(persona_id)
    if tenant is None or not principal.sees(persona_id, tenant):
        raise ResourceNotFound(f"no persona {persona_id!r}")
    return persona_id


def thread(principal: Principal, thread_id: str) -> str:
    """The thread's id, if the principal sees its persona; else 404."""
    owner = THREADS.get(thread_id)
    if owner is None or not principal.sees(owner, PERSONAS[owner]):
        raise ResourceNotFound(f"no thread {thread_id!r}")
    return thread_id


def _routes(leaky: bool) -> APIRouter:
    router = APIRouter()

    @router.get("/ok")
    async def ok() -> dict[str, bool]:
        return {"ok": True}

    @router.get("/v1/personas")
    async def personas(who: Reader) -> list[str]:
        return [pid for pid, tenant in PERSONAS.items() if who.sees(pid, tenant)]

    @router.get("/v1/personas/{persona_id}")
    async def get_persona(persona_id: str, who: Reader) -> dict[str, str]:
        return {"id": persona(who, persona_id)}

    @router.post("/v1/personas/{persona_id}/pulses")
    async def start(persona_id: str, body: dict[str, Any], who: Runner) -> dict[str, str]:
        checked = persona_id if leaky else persona(who, persona_id)
        return {"persona": checked, "input": str(body.get("input"))}

    @router.post("/threads/{thread_id}/runs/{run_id}/cancel")
    async def cancel(thread_id: str, run_id: str, who: Runner) -> dict[str, str]:
        return {"cancelled": f"{thread(who, thread_id)}/{run_id}"}

    @router.post("/v1/approvals/{thread_id}")
    async def approve(thread_id: str, body: dict[str, Any], who: Approver) -> dict[str, Any]:
        return {"thread": thread(who, thread_id), "approver": who.name,
                "approve": bool(body.get("approve"))}

    @router.delete("/v1/personas/{persona_id}")
    async def delete(persona_id: str, who: Admin) -> dict[str, str]:
        return {"deleted": persona(who, persona_id)}

    return router
