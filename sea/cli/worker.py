"""``sea worker``: run queued pulses and schedules until stopped (SIGINT or SIGTERM).

Any number of workers, on any machines, share one PostgreSQL database: each runs up to
``--concurrency`` pulses at once, a persona's pulses one at a time in submission order.
A worker that dies (SIGKILL, a crash, a lost connection) stops sending heartbeats; after
``--stall-timeout`` seconds another worker continues its pulses from their last
checkpoints. The events of the pulses ``sea serve --workers`` queued go into the
servers' event log, and a server's cancel request reaches the worker that runs the pulse
(:mod:`sea.serve.relay`; with the ``serve`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from saimemory import open_store
from sea.cli._numbers import positive_count, positive_seconds
from sea.cli._runtime import runtime_args
from sea.cli._toolsources import host_tools
from sea.cli.run import add_busy_arguments, add_model_arguments, add_preempted_argument
from sea.host.runtime import Runtime


def register(subparsers: Any) -> None:
    """Add ``sea worker``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "worker", help="run queued pulses and schedules (PostgreSQL) until stopped"
    )
    add_model_arguments(parser)
    add_busy_arguments(parser, timeout=600.0)
    add_preempted_argument(parser)
    parser.add_argument("--concurrency", type=positive_count, default=1,
                        help="pulses run at once (default: 1)")
    parser.add_argument("--attempts", type=positive_count, default=3,
                        help="starts of a pulse before it ends failed (default: 3)")
    parser.add_argument("--stall-timeout", type=positive_seconds, default=30.0, metavar="SECONDS",
                        help="a worker silent this long is taken for dead and its pulses "
                        "go to other workers (default: 30)")
    parser.add_argument("--heartbeat", type=positive_seconds, default=5.0, metavar="SECONDS",
                        help="seconds between this worker's heartbeats (default: 5)")
    parser.add_argument("--retry-wait", type=positive_seconds, default=1.0, metavar="SECONDS",
                        help="wait before a failed pulse is tried again, doubled at each "
                        "attempt (default: 1)")
    parser.add_argument("--tick", type=positive_seconds, default=1.0, metavar="SECONDS",
                        help="seconds between looks at the schedules (default: 1)")
    parser.add_argument("--quiet", action="store_true",
                        help="do not print a line per pulse that ends")
    parser.set_defaults(func=worker_command)


def worker_command(args: argparse.Namespace) -> int:
    """Handler of ``sea worker``."""
    from sea.queue import PulseQueue, Worker, WorkerOptions

    options = WorkerOptions(
        concurrency=args.concurrency, attempts=args.attempts,
        stall_timeout=args.stall_timeout, heartbeat=args.heartbeat,
        retry_wait=args.retry_wait, tick=args.tick,
    )
    setup = runtime_args(args)
    queue = PulseQueue(setup.location, pool_size=args.concurrency + 4)

    def report(line: str) -> None:
        if not args.quiet:
            print(f"sea worker: {line}", file=sys.stderr, flush=True)

    async def work() -> None:
        async with host_tools(args.tools, args.mcp) as tools:
            store = open_store(setup.location)
            try:
                runtime = Runtime(setup.config(store, tools=tools, keep_checkpoints=True))
                async with queue, _relay(setup.location, store) as relay:
                    worker = Worker(queue, runtime, options, report=report, watch=relay)
                    if relay is not None:
                        relay.cancel_with(worker.cancel)
                        await relay.start()
                    report(f"{worker.name} runs up to {options.concurrency} pulse(s) at once")
                    await worker.run()
            finally:
                store.close()
                setup.flush_telemetry()

    asyncio.run(work())
    return 0


@asynccontextmanager
async def _relay(location: str, store: Any) -> AsyncIterator[Any]:
    """The relay that publishes the pulses' events for the servers (None without the
    serve extra: the pulses run unwatched)."""
    try:
        from sea.serve.db import ServerDB
        from sea.serve.pglog import DDL, PgEventLog
        from sea.serve.records import Records
        from sea.serve.relay import Relay
    except ImportError:
        yield None
        return
    db = ServerDB(location)
    log = PgEventLog(location, sweep_s=0)
    try:
        records = Records(db)
        db.create(DDL)
        yield Relay(log, records, store)
    finally:
        await log.aclose()
        db.close()
