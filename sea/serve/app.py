"""The server's FastAPI application: routers, error handlers, auth, the run hub.

:func:`create_app` takes the parts already built (a runtime, its store, the server's
database, the library) and gives the ASGI app ``sea serve`` runs on uvicorn; tests may run
it in-process. Each router is a module of its own; every route depends on a role
(:func:`sea.serve.auth.require`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from sea.serve import errors
from sea.serve.auth import Auth
from sea.serve.context import ServeContext


def create_app(ctx: ServeContext, *, token: str) -> FastAPI:
    """The server's app.

    Args:
        ctx: The server's parts.
        token: The API key the server accepts (the dev token).

    Returns:
        The FastAPI app; ``app.state.sea`` is ``ctx``, ``app.state.auth`` the auth
        dependency.
    """
    from sea.serve.compat import assistants, meta, runs, stateless, threads
    from sea.serve.v1 import approvals, personas, pulses

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await ctx.hub.close()
        await ctx.runtime.aclose()

    app = FastAPI(title="SEA", version=ctx.settings.version or "0", lifespan=lifespan,
                  docs_url=None, redoc_url=None,  # their pages load scripts from a CDN
                  description="SEA's server: the LangGraph-compatible API at the root, "
                  "SEA's own API under /v1.")
    app.state.sea = ctx
    app.state.auth = Auth(token)
    errors.install(app)
    for module in (meta, assistants, threads, runs, stateless, personas, pulses, approvals):
        app.include_router(module.router)
    return app
