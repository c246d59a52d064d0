"""Where the runtime keeps its checkpoints: a SQLite file or a PostgreSQL database.

Pulses that run at the same time on one event loop share one saver (one connection, whose
statements the saver serializes), so they never hold two write transactions on a SQLite
file at once, which SQLite answers with "database is locked", and a host does not open a
PostgreSQL connection per pulse. The saver opens with the first pulse of a loop and closes
when the last one ends.

:func:`checkpoints_at` picks the backend from the location: a ``postgresql://`` DSN (its
``?schema=NAME`` keeps the checkpoint tables in that schema, as SAIMemory's store does)
or a file path. Checkpoints in PostgreSQL let any process resume any waiting pulse.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, urlencode

from langgraph.checkpoint.base import BaseCheckpointSaver

from sea.errors import UsageError

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_SETUP_LOCK = 0x5EA5C4  # advisory lock id held while the checkpoint tables are migrated


class Checkpoints(Protocol):
    """Hands out a checkpoint saver for the running event loop."""

    def saver(self) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
        """The running loop's saver, open for as long as the context lasts."""
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
    """The saver of one event loop and how many pulses use it."""

    ready: asyncio.Task[BaseCheckpointSaver[Any]]
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    users: int = 0


class _PerLoop:
    """One saver per event loop, opened by ``_open`` and shared by the loop's pulses."""

    def __init__(self) -> None:
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
        try:
            yield await asyncio.shield(shared.ready)
        finally:
            shared.users -= 1
            if shared.users == 0:
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
    """

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)

    async def _open(self, stack: AsyncExitStack) -> BaseCheckpointSaver[Any]:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        self.path.parent.mkdir(parents=True, exist_ok=True)
        return await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(str(self.path)))


class PostgresCheckpoints(_PerLoop):
    """Checkpoints in a PostgreSQL database (``langgraph-checkpoint-postgres``).

    Args:
        dsn: A ``postgresql://`` DSN; ``?schema=NAME`` puts the tables in that schema (it
            is created when missing).

    Raises:
        UsageError: the PostgreSQL packages are not installed.
    """

    def __init__(self, dsn: str) -> None:
        super().__init__()
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
        # lock serializes the schema's creation and the tables' migrations
        async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
            await conn.execute("SELECT pg_advisory_lock(%s)", [_SETUP_LOCK])
            try:
                if self.schema is not None:
                    create = sql.SQL("CREATE SCHEMA IF NOT EXISTS {}")
                    await conn.execute(create.format(sql.Identifier(self.schema)))
                await saver.setup()
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", [_SETUP_LOCK])
        return saver


def _with_search_path(dsn: str, schema: str) -> str:
    separator = "&" if "?" in dsn else "?"
    return dsn + separator + urlencode({"options": f"-c search_path={schema}"}, quote_via=quote)
