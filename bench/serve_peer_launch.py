"""``langgraph dev`` with its in-memory queue polled every POLL seconds instead of 0.5 s.

A variant for ``bench_serve_peer.py --queue-poll-s``, not LangGraph's server as shipped: the
in-memory runtime looks for pending runs every half second (and takes only runs created
before the look began), so a run waits 0.5 to 1 s before it starts, which hides the
server's own cost. Run under the peer's Python:
``VENV/bin/python serve_peer_launch.py POLL dev [langgraph dev options]``.
"""

from __future__ import annotations

import asyncio
import sys
import types
from typing import Any

IDLE_POLL_S = 0.5
"""The wait ``langgraph_runtime_inmem.ops.Runs.next`` sleeps when the last look found none."""


class _Asyncio(types.ModuleType):
    """``asyncio`` for the runtime's module: its idle poll shortened, the rest unchanged."""

    def __init__(self, poll_s: float) -> None:
        super().__init__("asyncio")
        self.poll_s = poll_s

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    async def sleep(self, delay: float, result: Any = None) -> Any:
        return await asyncio.sleep(self.poll_s if delay == IDLE_POLL_S else delay, result)


def main() -> None:
    import uvicorn
    from langgraph_cli.cli import cli

    poll_s = float(sys.argv[1])
    serve = uvicorn.run

    def run(*args: Any, **kwargs: Any) -> Any:
        # imported here: the runtime reads its configuration from the environment
        # ``langgraph dev`` has set up by now
        from langgraph_runtime_inmem import ops
        ops.asyncio = _Asyncio(poll_s)  # type: ignore[attr-defined, unused-ignore]
        return serve(*args, **kwargs)

    uvicorn.run = run
    cli(args=sys.argv[2:])


if __name__ == "__main__":
    main()
