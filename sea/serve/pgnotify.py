"""PostgreSQL notifications for the server's processes: one ``LISTEN`` connection each.

Every ``sea serve`` (and ``sea worker`` that publishes events) on one database listens on
the channels it needs, on one connection of its own: the event log wakes the streams
that wait for a run (:mod:`sea.serve.pglog`), and a cancel request reaches whichever
process runs the pulse (:mod:`sea.serve.fleet`). A lost connection is opened again
after a short wait; meanwhile readers fall back on their own timeouts, so a notification
is a wake-up, never the only way to learn something.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import suppress
from typing import Any

log = logging.getLogger("sea.serve")

Callback = Callable[[str], None]
"""Called with a notification's payload, on the listener's loop; it must not block."""


def pg_connect_args(location: str) -> tuple[str, dict[str, Any]]:
    """The server DSN and connection keywords of a store's ``postgresql://`` location
    (its ``?schema=`` as the search path)."""
    from saimemory.postgres import split_schema

    dsn, schema = split_schema(location)
    return dsn, {"options": f"-c search_path={schema or 'public'}", "autocommit": True}


class PgListener:
    """Listens on some channels and calls their callbacks.

    Args:
        location: The store's ``postgresql://`` DSN (``?schema=`` allowed).
        retry_s: Seconds before a lost connection is opened again.
    """

    def __init__(self, location: str, *, retry_s: float = 1.0) -> None:
        self._dsn, self._kwargs = pg_connect_args(location)
        self._retry_s = retry_s
        self._callbacks: dict[str, list[Callback]] = {}
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    def subscribe(self, channel: str, callback: Callback) -> None:
        """Call ``callback`` with each payload sent on ``channel`` (before :meth:`start`)."""
        self._callbacks.setdefault(channel, []).append(callback)

    async def start(self, *, wait_s: float = 10.0) -> None:
        """Start listening (once); return when the first connection listens, or after
        ``wait_s`` seconds (it keeps trying)."""
        if self._task is None:
            self._task = asyncio.create_task(self._listen(), name="sea-pg-listener")
        with suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), wait_s)

    async def aclose(self) -> None:
        """Stop listening."""
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _listen(self) -> None:
        import psycopg

        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self._dsn,
                                                                 **self._kwargs) as conn:
                    for channel in self._callbacks:
                        await conn.execute(f'LISTEN "{channel}"')
                    self._ready.set()
                    async for note in conn.notifies():
                        for callback in self._callbacks.get(note.channel, ()):
                            try:
                                callback(note.payload)
                            except Exception:  # one callback's fault stops no other
                                log.exception("notification on %s", note.channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database went away: listen again soon
                log.warning("sea serve: notifications lost (%s); listening again", exc)
            await asyncio.sleep(self._retry_s)
