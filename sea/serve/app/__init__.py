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

from sea.serve import errors, ops
from sea.serve.auth import Auth
from sea.serve.context import ServeContext
from sea.serve.keys import KeyStore
from sea.serve.security import SecurityOptions, install


def create_app(ctx: ServeContext, *, token: str | None = None, auth: Auth | None = None,
               security: SecurityOptions | None = None) -> FastAPI:
    """The server's app.

    Args:
        ctx: The server's parts.
        token: A dev token accepted besides the stored keys (``sea serve`` makes one when
            the store holds no key).
        auth: How requests are authenticated (default: the keys stored in the server's
            database, and ``token``).
        security: The request guards (Host check, CORS, body and time limits); None: none
            (an app run in-process by a test).

    Returns:
        The FastAPI app; ``app.state.sea`` is ``ctx``, ``app.state.auth`` the auth
        dependency, ``app.state.ops`` what the drain needs (:mod:`sea.serve.ops`).
    """
    from sea.serve import studio
    from sea.serve.compat import assistants, meta, runs, stateless, threads
    from sea.serve.v1 import approvals, personas, pulses, routers

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
    app.state.auth = auth or Auth(KeyStore(ctx.db), dev_token=token)
    errors.install(app)
    if security is not None:
        install(app, security)
    for module in (meta, assistants, threads, runs, stateless, personas, pulses, approvals):
        app.include_router(module.router)
    routers.include(app)
    studio.install(app)
    ops.install(app, ctx.metrics)  # last: the outermost middleware (logs, metrics, drain)
    return app
