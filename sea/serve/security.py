"""The server's guards around every request: where it may listen, which ``Host`` it
answers, which browser origins may call it, how large a body and how long a request may be.

:func:`check_bind` runs before the server listens; :func:`install` adds the guards to the
app, as plain ASGI middleware (and Starlette's CORS middleware), outermost first:

1. the ``Host`` check (a page of another site that rebinds its name to 127.0.0.1 sends its
   own name as ``Host``, and is refused: a guard against DNS rebinding);
2. CORS, only for the origins given, with the Private Network Access answer on preflights
   that ask for it (a page on a public origin calling a server on this machine);
3. the body limit (413);
4. the time limit of a request that is neither a stream nor a wait (503).

Refusals answer SEA's error body: ``{"error": {"code", "message", "hint"}, "detail"}``.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import anyio
import orjson
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sea.errors import (
    BindRefusedError,
    BodyTooLargeError,
    HostNotAllowedError,
    RequestTimeoutError,
    SeaError,
    SecurityOptionError,
)

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
"""The host names every server answers to."""
DEFAULT_MAX_BODY = 1024 * 1024
DEFAULT_TIMEOUT = 60.0
UNTIMED_PATHS = ("*/stream", "*/wait", "*/join", "*/events")
"""Paths (:func:`fnmatch.fnmatchcase` patterns) a request may stay on as long as it needs:
streams and waits. A request asking for ``text/event-stream`` is not timed either."""
CORS_ALLOW_HEADERS = ("authorization", "x-api-key", "content-type", "last-event-id",
                      "x-auth-scheme")
CORS_EXPOSE_HEADERS = ("content-location", "location")
_ORIGIN = re.compile(r"https?://[A-Za-z0-9.\-\[\]:]+")


@dataclass(frozen=True, slots=True)
class SecurityOptions:
    """The guards' settings (``sea serve`` fills them from its options)."""

    hosts: tuple[str, ...] = ()
    """Host names answered besides :data:`LOOPBACK_NAMES` (``--allow-host``): exact names,
    ``*.example.com``, or ``*`` for any (behind a proxy that checks it)."""
    cors_origins: tuple[str, ...] = ()
    """Browser origins allowed to call the server (``--cors-origin``): none, no CORS."""
    max_body_bytes: int = DEFAULT_MAX_BODY
    timeout: float = DEFAULT_TIMEOUT
    """Seconds a request that is neither a stream nor a wait may take (0: no limit)."""
    untimed_paths: tuple[str, ...] = UNTIMED_PATHS

    def __post_init__(self) -> None:
        for origin in self.cors_origins:
            if origin != "*" and not _ORIGIN.fullmatch(origin):
                raise SecurityOptionError(
                    f"the CORS origin {origin!r} is not an origin: write scheme://host[:port] "
                    "without a path, e.g. http://localhost:3000")
        for host in self.hosts:
            if not host.strip() or any(char in host for char in "/ "):
                raise SecurityOptionError(f"the host name {host!r} is not a host name "
                                          "(e.g. sea.example.com, *.example.com)")
        if self.max_body_bytes < 1:
            raise SecurityOptionError(f"the body limit must be at least 1 byte, got "
                                      f"{self.max_body_bytes}")
        if self.timeout < 0:
            raise SecurityOptionError(f"the request time limit cannot be negative, got "
                                      f"{self.timeout}")


def is_loopback(host: str) -> bool:
    """Whether an address to listen on is reachable from this machine only."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def served_hosts(bind: str, given: Sequence[str] = ()) -> tuple[str, ...]:
    """The host names to answer besides the loopback ones: the names given
    (``--allow-host``) and the address the server listens on, unless it listens on every
    address (``0.0.0.0``, ``::``: then only the names given)."""
    names = list(given)
    address = bind.strip("[]").lower()
    if address not in ("0.0.0.0", "::", "") and address not in names:
        names.append(address)
    return tuple(names)


def check_bind(host: str, has_keys: bool) -> None:
    """Refuse to listen beyond this machine while the store holds no API key.

    Args:
        host: The address to listen on (``--host``).
        has_keys: Whether the store holds a key that is not revoked.

    Raises:
        BindRefusedError: ``host`` is not a loopback address and there is no key.
    """
    if has_keys or is_loopback(host):
        return
    raise BindRefusedError(
        f"--host {host} would let other machines reach the server, and the store holds no "
        "API key: anyone could use it. Add a key first (sea keys add NAME --role read "
        "--role run --tenant TENANT, with the same --db), or listen on 127.0.0.1")


def install(app: Any, options: SecurityOptions) -> None:
    """Add the guards to a Starlette or FastAPI app (before it starts).

    Args:
        app: The app.
        options: The guards' settings.
    """
    if options.timeout > 0:
        app.add_middleware(TimeLimit, seconds=options.timeout, untimed=options.untimed_paths)
    app.add_middleware(BodyLimit, max_bytes=options.max_body_bytes)
    if options.cors_origins:
        app.add_middleware(CORSMiddleware,  # browsers send origins in lower case
                           allow_origins=[origin.lower() for origin in options.cors_origins],
                           allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
                           allow_headers=list(CORS_ALLOW_HEADERS),
                           expose_headers=list(CORS_EXPOSE_HEADERS),
                           allow_private_network=True, allow_credentials=False)
    app.add_middleware(HostCheck, hosts=options.hosts)


def error_body(error: SeaError) -> dict[str, Any]:
    """SEA's error body for an answer: code, message and hint, and ``detail`` (what
    LangGraph's SDKs show)."""
    hint = getattr(error, "hint", None)
    return {"error": {"code": error.code, "message": error.message, "hint": hint},
            "detail": error.message}


async def send_error(send: Send, error: SeaError) -> None:
    """Answer a request with ``error`` (its ``status``, its body, its ``headers``)."""
    body = orjson.dumps(error_body(error))
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    headers += [(name.lower().encode(), value.encode())
                for name, value in getattr(error, "headers", {}).items()]
    await send({"type": "http.response.start", "status": getattr(error, "status", 500),
                "headers": headers})
    await send({"type": "http.response.body", "body": body})


class HostCheck:
    """Answer only requests whose ``Host`` is a loopback name or one of ``hosts``."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str] = ()) -> None:
        self.app = app
        self.any = "*" in hosts
        self.hosts = tuple(name.lower() for name in (*LOOPBACK_NAMES, *hosts))

    def allowed(self, host: str) -> bool:
        """Whether a ``Host`` header's name (its port aside) is answered."""
        name = host_name(host)
        return bool(name) and any(fnmatchcase(name, pattern) for pattern in self.hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.any:
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host") or ""
        if self.allowed(host):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await send_error(send, HostNotAllowedError(
                f"the server does not answer for the host {host!r}"))


class BodyLimit:
    """Refuse a request whose body is larger than ``max_bytes`` (413), by its
    ``Content-Length`` or, without one, as it arrives."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _error(self) -> BodyTooLargeError:
        return BodyTooLargeError(f"the request's body is larger than {self.max_bytes} bytes")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await send_error(send, self._error())
            return
        seen = 0
        over = False
        started = False

        async def counting_receive() -> Message:
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    over = True
                    raise self._error()
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if over:  # the app's own answer to the error it was raised: ours goes instead
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not over:
                raise
        if over and not started:
            await send_error(send, self._error())


class TimeLimit:
    """Cancel a request that takes longer than ``seconds`` and answer 503, unless its path
    matches ``untimed`` or it asks for an event stream; once a response is an event
    stream, it is no longer timed."""

    def __init__(self, app: ASGIApp, seconds: float = DEFAULT_TIMEOUT,
                 untimed: Sequence[str] = UNTIMED_PATHS) -> None:
        self.app = app
        self.seconds = seconds
        self.untimed = tuple(untimed)

    def timed(self, scope: Scope) -> bool:
        """Whether the request is under the time limit."""
        if scope["type"] != "http":
            return False
        if "text/event-stream" in (_header(scope, b"accept") or ""):
            return False
        path = scope.get("path", "")
        return not any(fnmatchcase(path, pattern) for pattern in self.untimed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.timed(scope):
            await self.app(scope, receive, send)
            return
        started = False
        with anyio.CancelScope(deadline=anyio.current_time() + self.seconds) as limit:

            async def watched_send(message: Message) -> None:
                nonlocal started
                if message["type"] == "http.response.start":
                    started = True
                    content_type = dict(message.get("headers", [])).get(b"content-type", b"")
                    if content_type.startswith(b"text/event-stream"):
                        limit.deadline = math.inf
                await send(message)

            await self.app(scope, receive, watched_send)
        if limit.cancelled_caught and not started:
            await send_error(send, RequestTimeoutError(
                f"the request did not finish within {self.seconds:g} s"))


def host_name(host: str) -> str:
    """The name in a ``Host`` header, without its port: ``[::1]:2024`` is ``::1``."""
    name = host.strip().lower()
    if name.startswith("["):
        return name[1:name.index("]")] if "]" in name else ""
    if name.count(":") == 1:
        return name.rpartition(":")[0]
    return name


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None
