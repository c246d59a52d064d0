"""Server-sent events: a run's log as a stream that a client may drop and rejoin.

:func:`follow` reads the log from a position (replay), then waits for new entries (live),
sending a keep-alive comment when nothing came for a while, until the log is closed and
read to its end. Each entry becomes zero or more events, each with its ``id:``; a client
that reconnects with ``Last-Event-ID`` gets exactly the events after that one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import orjson
from fastapi.responses import StreamingResponse

from sea.serve.eventlog import Entry, EventLog

Part = tuple[str, str, Any]
"""(id, event name, data)."""
KEEPALIVE = b": ping\n\n"
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def encode(event_id: str, event: str, data: Any) -> bytes:
    """One SSE event (orjson writes no newline, so the data is one ``data:`` line)."""
    return (f"id: {event_id}\nevent: {event}\ndata: ".encode() + orjson.dumps(data)
            + b"\n\n")


async def follow(
    log: EventLog,
    run_id: str,
    parts: Callable[[Entry], Sequence[Part]],
    *,
    start: int = 0,
    skip: Callable[[str], bool] = lambda _: False,
    keepalive_s: float = 15.0,
    missing: Callable[[], Awaitable[Sequence[Part]]] | None = None,
    on_disconnect: Callable[[], None] | None = None,
) -> AsyncIterator[bytes]:
    """The events of run ``run_id``'s log after entry ``start``.

    Args:
        log: The event logs.
        run_id: Whose log.
        parts: The events one entry becomes.
        start: Read the entries after this sequence number.
        skip: Events (by id) the client has already seen.
        keepalive_s: Seconds of silence before a keep-alive comment.
        missing: The events to send when the log is gone (the run ended long ago, or
            before a restart): its final state.
        on_disconnect: Called when the client went away before the log ended (it must
            not block).
    """
    after = start
    ended = False
    try:
        while True:
            batch = await log.read(run_id, after, keepalive_s)
            if not batch.known:
                for event_id, event, data in (await missing() if missing else ()):
                    if not skip(event_id):
                        yield encode(event_id, event, data)
                ended = True
                return
            out = []  # what one read found goes out as one write (one send, one syscall)
            for entry in batch.entries:
                after = entry.seq
                for event_id, event, data in parts(entry):
                    if not skip(event_id):
                        out.append(encode(event_id, event, data))
            if out:
                yield b"".join(out)
            if batch.closed:
                ended = True
                return
            if not batch.entries:
                yield KEEPALIVE
    finally:
        if not ended and on_disconnect is not None:
            on_disconnect()  # not awaited: the stream's task may be cancelled


def response(body: AsyncIterator[bytes], headers: dict[str, str] | None = None,
             status: int = 200) -> StreamingResponse:
    """An SSE response of ``body``."""
    return StreamingResponse(body, status_code=status, media_type="text/event-stream",
                             headers={**HEADERS, **(headers or {})})
