"""Operations around every request: one log line each, the HTTP metrics, the open streams
(which a shutdown tells and closes), the refusal of new requests while the server drains,
and ``GET /metrics``.

:class:`OpsMiddleware` is plain ASGI and the app's outermost layer, so a request any guard
refuses is logged and counted too. Its log line (logger ``sea.serve.access``, level INFO)::

    POST /threads/{thread_id}/runs/stream 200 4012.3ms key=dev

method, the route's path template (never the ids in the path, the query or the body),
status, duration (a stream's: until it ends) and the name of the key that made the request
(``-`` before a key was accepted); never the key itself.
"""

from __future__ import annotations

import asyncio
import logging
import time

import anyio
import orjson
from fastapi import APIRouter, FastAPI
from fastapi.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sea.errors import ServerShuttingDown
from sea.serve.deps import Admin, Ctx
from sea.serve.errors import error_body
from sea.serve.metrics import ServerMetrics

access = logging.getLogger("sea.serve.access")
router = APIRouter(tags=["operations"])
UNMATCHED = "(unmatched)"
"""The route label of a request no route matched (its path is not logged: it may be
anything a client sends)."""
DRAINING_MESSAGE = "the server is shutting down and takes no new request"


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {"text/plain": {}}}})
async def metrics(ctx: Ctx, principal: Admin) -> Response:
    """The server's Prometheus metrics (text format; a key with the ``admin`` role, sent
    as Prometheus sends one: ``authorization: Bearer``)."""
    return Response(ctx.metrics.render(), media_type=ctx.metrics.content_type)


def shutdown_event(message: str) -> bytes:
    """The last event a stream gets when the server closes it as it shuts down.

    ``event: shutdown``, not ``end`` or ``error``, and without an ``id:``: the run it
    followed may go on elsewhere, and a client (``langgraph_sdk``'s resumable streams, a
    browser's ``EventSource``) reconnects with the ``Last-Event-ID`` of the last real event
    and misses nothing.
    """
    data = {"code": ServerShuttingDown.code, "message": message,
            "hint": "reconnect with Last-Event-ID to go on"}
    return b"event: shutdown\ndata: " + orjson.dumps(data) + b"\n\n"


class OpenStream:
    """One SSE response under way: its sends go through here, so the server can end it.

    Args:
        send: The connection's ASGI send.
        scope: The cancel scope the app runs in for this request.
    """

    def __init__(self, send: Send, scope: anyio.CancelScope) -> None:
        self._send = send
        self._scope = scope
        self._lock = asyncio.Lock()  # taken without a yield when free (anyio's yields)
        self.ended = False

    async def send(self, message: Message) -> None:
        """Pass one of the app's messages on (dropped once the server ended the stream)."""
        async with self._lock:
            if self.ended:
                return
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.ended = True
            await self._send(message)

    async def end(self, last: bytes, wait_s: float = 1.0) -> None:
        """Send ``last`` as the stream's final bytes, end the response and stop the app's
        work for it (a client that does not read for ``wait_s`` is cut without it)."""
        with anyio.move_on_after(wait_s):
            async with self._lock:
                if not self.ended:
                    self.ended = True
                    await self._send({"type": "http.response.body", "body": last,
                                      "more_body": False})
        self.ended = True
        self._scope.cancel()


class Operations:
    """What the middleware shares with the drain: the metrics, the open streams, whether
    the server drains.

    Args:
        metrics: What requests are counted into.
    """

    def __init__(self, metrics: ServerMetrics) -> None:
        self.metrics = metrics
        self.streams: set[OpenStream] = set()
        self.draining = False

    def drain(self) -> None:
        """Take no new request from now on (503 ``SEA850``)."""
        self.draining = True
        self.metrics.draining.set(1)

    async def end_streams(self, message: str = DRAINING_MESSAGE) -> int:
        """Send every open stream its last event (:func:`shutdown_event`) and end it; how
        many there were."""
        open_now = list(self.streams)
        last = shutdown_event(message)
        async with anyio.create_task_group() as group:
            for stream in open_now:
                group.start_soon(stream.end, last)
        return len(open_now)


class OpsMiddleware:
    """Logs, counts and tracks every HTTP request (see the module's docstring).

    Args:
        app: The app it wraps.
        ops: The state it shares with the drain.
    """

    def __init__(self, app: ASGIApp, ops: Operations) -> None:
        self.app = app
        self.ops = ops

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        ops, started = self.ops, time.perf_counter()
        status = 500
        stream: OpenStream | None = None
        if ops.draining:
            status = ServerShuttingDown.status
            await _refuse(send)
            self._record(scope, status, started)
            return

        async def watched(message: Message) -> None:
            nonlocal status, stream
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if _is_stream(message):
                    stream = OpenStream(send, cancel)
                    ops.streams.add(stream)
                    ops.metrics.open_streams.inc()
            if stream is not None:
                await stream.send(message)
            else:
                await send(message)

        try:
            with anyio.CancelScope() as cancel:
                await self.app(scope, receive, watched)
        finally:
            if stream is not None:
                ops.streams.discard(stream)
                ops.metrics.open_streams.dec()
            self._record(scope, status, started)

    def _record(self, scope: Scope, status: int, started: float) -> None:
        seconds = time.perf_counter() - started
        route = getattr(scope.get("route"), "path", None) or UNMATCHED
        method = str(scope.get("method", "?"))
        metrics = self.ops.metrics
        metrics.requests.labels(method, route, str(status)).inc()
        metrics.request_seconds.labels(method, route).observe(seconds)
        principal = (scope.get("state") or {}).get("principal")
        key = getattr(principal, "name", None) or "-"
        access.info("%s %s %d %.1fms key=%s", method, route, status, seconds * 1000, key)


def _is_stream(message: Message) -> bool:
    for name, value in message.get("headers", ()):
        if name.lower() == b"content-type":
            return bytes(value).startswith(b"text/event-stream")
    return False


async def _refuse(send: Send) -> None:
    body = orjson.dumps(error_body(ServerShuttingDown.code, DRAINING_MESSAGE,
                                   ServerShuttingDown.hint))
    await send({"type": "http.response.start", "status": ServerShuttingDown.status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"), (b"retry-after", b"1")]})
    await send({"type": "http.response.body", "body": body})


def install(app: FastAPI, metrics: ServerMetrics) -> Operations:
    """Add ``/metrics`` and wrap the app in :class:`OpsMiddleware` (outermost: call this
    after every other middleware is added).

    Returns:
        The operations state (also ``app.state.ops``), which the drain uses.
    """
    ops = Operations(metrics)
    app.include_router(router)
    app.add_middleware(OpsMiddleware, ops=ops)
    app.state.ops = ops
    return ops
