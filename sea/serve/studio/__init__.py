"""The studio: a web page served by ``sea serve`` at ``/studio/``, on the ``/v1`` API only.

Plain ES modules and two vendored libraries (``static/vendor``, see ``VENDORED.md``): no
build step, nothing fetched from elsewhere. Every file goes out with a strict Content
Security Policy (scripts, styles and connections to this origin only, no inline script, no
framing) and an ETag. The files are public: they hold no secret, and every call they make
carries the key the page asks for once and keeps for the tab.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CSP", "STATIC", "install"]

STATIC = Path(__file__).parent / "static"
"""The studio's files."""

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
       "font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'")
"""The Content Security Policy of every studio response."""

HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-cache"),  # revalidated by ETag: an edited file is seen at once
)


class _Guarded:
    """The static files, each response with :data:`HEADERS`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, guarded)


def install(app: FastAPI) -> None:
    """Serve the studio at ``/studio/`` (``/studio`` redirects there)."""

    @app.get("/studio", include_in_schema=False)
    async def studio_root() -> RedirectResponse:
        return RedirectResponse("/studio/", status_code=308)

    app.mount("/studio", _Guarded(StaticFiles(directory=STATIC, html=True)), name="studio")
