"""The runtime's own checkpoint file: one SQLite connection per event loop, shared.

Pulses that run at the same time on one event loop share one ``AsyncSqliteSaver`` (it
serializes its statements), so they never hold two write transactions on the same file at
once, which SQLite answers with "database is locked". The connection opens with the first
pulse of a loop and closes when the last one ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver


@dataclass(slots=True)
class _Shared:
    """The saver of one event loop and how many pulses use it."""

    ready: asyncio.Task[BaseCheckpointSaver[Any]]
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    users: int = 0


class SqliteCheckpoints:
    """Hands out the saver of a checkpoint file, one per event loop.

    Args:
        path: The SQLite file (its directory is created on first use).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(str(self.path)))

    @staticmethod
    async def _close(shared: _Shared) -> None:
        # an open still under way finishes first; one that failed was reported to its users
        with suppress(Exception):
            await shared.ready
        await shared.stack.aclose()
