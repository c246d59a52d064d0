"""Where the runtime keeps its checkpoints: a SQLite file or a PostgreSQL database.

A SQLite checkpoint file is in incremental auto-vacuum mode: the pages of the checkpoints
of ended pulses go back to the file system when the last pulse of a loop ends, so the file
does not keep the size of its largest pulse.

Pulses that run at the same time on one event loop share one saver (one connection, whose
statements the saver serializes), so they never hold two write transactions on a SQLite
file at once, which SQLite answers with "database is locked", and a host does not open a
PostgreSQL connection per pulse. The saver opens with the first pulse of a loop and stays
open for :data:`LINGER_S` seconds after the last one ends, so that pulses one after another
do not each open a connection, set the tables up and close it again (about a sixth of a
short pulse's time on SQLite); it closes when the loop has been idle that long, when the
loop shuts down (its tasks are cancelled, as ``asyncio.run`` does) or when
:meth:`Checkpoints.aclose` is awaited (``Runtime.close`` does it on its own loop).

:func:`checkpoints_at` picks the backend from the location: a ``postgresql://`` DSN (its
``?schema=NAME`` keeps the checkpoint tables in that schema, as SAIMemory's store does)
or a file path. Checkpoints in PostgreSQL let any process resume any waiting pulse.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, urlencode

from langgraph.checkpoint.base import BaseCheckpointSaver

from sea.errors import UsageError

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_INCREMENTAL = 2  # PRAGMA auto_vacuum = INCREMENTAL
_SETUP_LOCK = 0x5EA5C4  # advisory lock id held while the checkpoint tables are migrated


LINGER_S = 2.0
"""Seconds a loop's saver stays open after its last pulse ended."""


class Checkpoints(Protocol):
    """Hands out a checkpoint saver for the running event loop."""

    def saver(self) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
        """The running loop's saver, open for as long as the context lasts."""
        ...

    async def aclose(self) -> None:
        """Close the running loop's saver now if no pulse uses it (one kept open after
        the last pulse)."""
        ...


def checkpoints_at(location: str | Path) -> Checkpoints:
    """The checkpoints at ``location``: a ``postgresql://`` DSN, else a SQLite file."""
    text = str(location)
    if text.startswith(POSTGRES_SCHEMES):
        return PostgresCheckpoints(text)
    if "://" in text:
        raise UsageError(
            f"checkpoints at {text!r}: expected a SQLite file path or a postgresql:// DSN"
        )
    return SqliteCheckpoints(location)


@dataclass(slots=True)
class _Shared:
    """The saver of one event loop, how many pulses use it, and its closing when idle."""

    ready: asyncio.Task[BaseCheckpointSaver[Any]]
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    users: int = 0
    closing: asyncio.Task[None] | None = None


class _PerLoop:
    """One saver per event loop, opened by ``_open`` and shared by the loop's pulses; kept
    open ``linger`` seconds after its last pulse (0: closed at once)."""

    def __init__(self, linger: float = LINGER_S) -> None:
        if linger < 0:
            raise ValueError(f"linger must be 0 or more, got {linger}")
        self.linger = linger
        self._shared: dict[asyncio.AbstractEventLoop, _Shared] = {}

    @asynccontextmanager
    async def saver(self) -> AsyncIterator[BaseCheckpointSaver[Any]]:
        """The running loop's saver, open for as long as the context lasts."""
        loop = asyncio.get_running_loop()
        shared = self._shared.get(loop)
        if shared is None:
            stack = AsyncExitStack()
            shared = _Shared(loop.create_task(self._open(stack)), stack)
            self._shared[loop] = shared
        shared.users += 1
        if shared.closing is not None:  # idle no more
            shared.closing.cancel()
            shared.closing = None
        try:
            yield await asyncio.shield(shared.ready)
        finally:
            shared.users -= 1
            if shared.users == 0:
                if self.linger > 0 and not shared.ready.cancelled():
                    shared.closing = loop.create_task(self._close_when_idle(loop, shared))
                else:
                    await self._retire(loop, shared)

    async def aclose(self) -> None:
        """Close the running loop's saver now if no pulse uses it."""
        loop = asyncio.get_running_loop()
        shared = self._shared.get(loop)
        if shared is not None and shared.users == 0:
            if shared.closing is not None:
                shared.closing.cancel()
                shared.closing = None
            await self._retire(loop, shared)

    async def _close_when_idle(self, loop: asyncio.AbstractEventLoop, shared: _Shared) -> None:
        try:
            await asyncio.sleep(self.linger)
        except asyncio.CancelledError:
            if shared.users == 0 and shared.closing is not None:  # the loop shuts down
                await self._retire(loop, shared)
            raise
        if shared.users == 0:
            await self._retire(loop, shared)

    async def _retire(self, loop: asyncio.AbstractEventLoop, shared: _Shared) -> None:
        if self._shared.get(loop) is shared:
            del self._shared[loop]
        await self._close(shared)

    async def _open(self, stack: AsyncExitStack) -> BaseCheckpointSaver[Any]:
        raise NotImplementedError

    @staticmethod
    async def _close(shared: _Shared) -> None:
        # an open still under way finishes first; one that failed was reported to its users
        with suppress(Exception):
            await shared.ready
        await shared.stack.aclose()


class SqliteCheckpoints(_PerLoop):
    """Checkpoints in a SQLite file.

    Args:
        path: The SQLite file (its directory is created on first use).
        linger: Seconds the saver stays open after its loop's last pulse.
    """

    def __init__(self, path: str | Path, *, linger: float = LINGER_S) -> None:
        super().__init__(linger)
        self.path = Path(path)

    async def _open(self, stack: AsyncExitStack) -> BaseCheckpointSaver[Any]:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        self.path.parent.mkdir(parents=True, exist_ok=True)
        saver = await stack.enter_async_context(
            AsyncSqliteSaver.from_conn_string(str(self.path))
        )
        await _incremental(saver.conn)
        stack.push_async_callback(_reclaim, saver.conn)
        return saver


async def _incremental(conn: Any) -> None:
    """Put the file in incremental auto-vacuum mode, so the pages of removed checkpoints
    can be given back to the file system (a file made before this is converted once)."""
    async with conn.execute("PRAGMA auto_vacuum") as cursor:
        mode = (await cursor.fetchone())[0]
    if mode == _INCREMENTAL:
        return
    await conn.execute(f"PRAGMA auto_vacuum = {_INCREMENTAL}")
    async with conn.execute("PRAGMA page_count") as cursor:
        pages = (await cursor.fetchone())[0]
    if pages > 1:  # an existing file takes the new mode only through VACUUM
        await conn.execute("VACUUM")


RECLAIM_FREE_PAGES = 64
"""Free pages (of 4 KiB by default) a SQLite checkpoint file holds before they are given
back: a pulse that ended leaves a few behind, too few to pay a vacuum and a log truncation
for; a large pulse's (or many small ones') are given back when its loop's last pulse ends."""


async def _reclaim(conn: Any) -> None:
    """Give the free pages back (removed checkpoints) when the last pulse of a loop ends
    and they are :data:`RECLAIM_FREE_PAGES` or more."""
    with suppress(Exception):  # housekeeping: never the pulse's failure
        async with conn.execute("PRAGMA freelist_count") as cursor:
            free = (await cursor.fetchone())[0]
        if free < RECLAIM_FREE_PAGES:
            return
        # run as a script: stepped as a statement, the pragma frees a single page
        await conn.executescript("PRAGMA incremental_vacuum;")
        async with conn.execute("PRAGMA wal_checkpoint(TRUNCATE)") as cursor:
            await cursor.fetchall()  # the file shrinks when the log is written back


class PostgresCheckpoints(_PerLoop):
    """Checkpoints in a PostgreSQL database (``langgraph-checkpoint-postgres``).

    Args:
        dsn: A ``postgresql://`` DSN; ``?schema=NAME`` puts the tables in that schema (it
            is created when missing).
        linger: Seconds the saver (its connection) stays open after its loop's last pulse.

    Raises:
        UsageError: the PostgreSQL packages are not installed.
    """

    def __init__(self, dsn: str, *, linger: float = LINGER_S) -> None:
        super().__init__(linger)
        try:
            import langgraph.checkpoint.postgres.aio  # noqa: F401
        except ImportError as exc:
            raise UsageError(
                "checkpoints in PostgreSQL need the postgres extra: pip install -e '.[postgres]' "
                f"({exc})"
            ) from exc
        from saimemory.postgres import split_schema

        self.dsn, self.schema = split_schema(dsn)
        if self.schema is not None and not _SCHEMA_NAME.match(self.schema):
            raise UsageError(
                f"schema name {self.schema!r} must match {_SCHEMA_NAME.pattern} "
                "(lower-case letters, digits and underscores)"
            )

    async def _open(self, stack: AsyncExitStack) -> BaseCheckpointSaver[Any]:
        import psycopg
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg import sql

        dsn = self.dsn if self.schema is None else _with_search_path(self.dsn, self.schema)
        saver = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(dsn))
        # processes that start at once would race on the first CREATE TABLE: an advisory
        # lock serializes the schema's creation and the tables' migrations. It is tried,
        # not waited for: a migration's CREATE INDEX CONCURRENTLY waits for every running
        # statement to end, a blocked pg_advisory_lock included (a deadlock nobody detects)
        async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
            while not await _try_lock(conn, _SETUP_LOCK):
                await asyncio.sleep(0.05)
            try:
                if self.schema is not None:
                    create = sql.SQL("CREATE SCHEMA IF NOT EXISTS {}")
                    await conn.execute(create.format(sql.Identifier(self.schema)))
                await saver.setup()
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", [_SETUP_LOCK])
        return saver


async def _try_lock(conn: Any, key: int) -> bool:
    row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", [key])).fetchone()
    return bool(row and row[0])


def _with_search_path(dsn: str, schema: str) -> str:
    separator = "&" if "?" in dsn else "?"
    return dsn + separator + urlencode({"options": f"-c search_path={schema}"}, quote_via=quote)


OWNER_KEY = "sea_owner"
"""Checkpoint metadata: ``host:pid`` of the process that ran a pulse that no other process
takes over (a queued pulse has none: a worker that died leaves it to another)."""


def owner_of_this_process() -> str:
    """``host:pid`` of this process."""
    return f"{socket.gethostname()}:{os.getpid()}"


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    return True


async def sweep_orphans(
    saver: BaseCheckpointSaver[Any],
    *,
    host: str,
    alive: Callable[[int], bool] = pid_alive,
) -> list[str]:
    """Remove the checkpoints of pulses whose process is gone: ones that ran on ``host``, by
    a process that no longer runs, and that do not wait for an answer (a waiting pulse may be
    resumed by anyone). Pulses of other hosts and of live processes are left alone.

    Returns:
        The pulse ids whose checkpoints were removed.
    """
    latest = await _latest(saver)
    removed = []
    for thread, item in latest.items():
        owner = (item.metadata or {}).get(OWNER_KEY)
        if not isinstance(owner, str) or ":" not in owner:
            continue
        where, _, pid = owner.rpartition(":")
        if where != host or not pid.isdigit() or alive(int(pid)):
            continue
        if any(write[1] == "__interrupt__" for write in item.pending_writes or ()):
            continue  # it waits for a person
        await saver.adelete_thread(thread)
        removed.append(thread)
    return removed


@dataclass(frozen=True, slots=True)
class WaitingPulse:
    """A pulse whose checkpoints show it waiting for an answer."""

    pulse_id: str
    since: str
    """When it started waiting (its last checkpoint's ISO time)."""
    requests: tuple[dict[str, Any], ...]
    """What it waits on (an action's approval request, a plan's preview)."""


async def waiting_pulses(saver: BaseCheckpointSaver[Any]) -> list[WaitingPulse]:
    """The pulses that wait for an answer in ``saver``, the longest waiting first (reads
    only)."""
    found: list[WaitingPulse] = []
    for item in (await _latest(saver)).values():
        values = [write[2] for write in item.pending_writes or () if write[1] == "__interrupt__"]
        if not values:
            continue
        requests = tuple(
            dict(interrupt.value) for value in values
            for interrupt in (value if isinstance(value, list | tuple) else [value])
            if isinstance(getattr(interrupt, "value", None), dict)
        )
        found.append(WaitingPulse(str(item.config["configurable"]["thread_id"]),
                                  str(item.checkpoint.get("ts", "")), requests))
    return sorted(found, key=lambda pulse: (pulse.since, pulse.pulse_id))


async def _latest(saver: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    """Each pulse's (thread's) latest top-level checkpoint."""
    latest: dict[str, Any] = {}
    async for item in saver.alist(None):
        thread = str(item.config["configurable"]["thread_id"])
        if item.config["configurable"].get("checkpoint_ns", "") != "":
            continue
        known = latest.get(thread)
        if known is None or item.checkpoint["id"] > known.checkpoint["id"]:
            latest[thread] = item
    return latest
