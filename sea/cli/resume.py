"""``sea resume``: answer a waiting pulse's approval request and run it to its end.

A pulse started with ``sea run --ask-before TOOL`` waits (status ``waiting``) before the
tool runs, and one whose plan asks for approval waits with the plan's preview; its
checkpoints live beside the SQLite store (or in the PostgreSQL store's database), so any
process that opens the same store can continue it. The pulse keeps the persona, playbook and
approval policy it started with. The answers: ``--approve`` (everything asked), ``--approve
low`` (a plan's specs of at most low risk), ``--approve 1,3`` (those specs), ``--deny``, or
``--answer JSON`` (:mod:`sea.cli._answers`).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from sea.cli._answers import add_answer_arguments, answer_of
from sea.cli._runtime import runtime_args
from sea.cli._toolsources import host_tools
from sea.cli._waiting import check_waiting
from sea.cli.run import (
    add_runtime_arguments,
    finish,
    recorded_dirs,
    terminable,
    view_of,
    writable_store,
)
from sea.errors import UsageError
from sea.host.runtime import Runtime


def register(subparsers: Any) -> None:
    """Add ``sea resume``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "resume", help="answer a waiting pulse's approval request and continue it"
    )
    parser.add_argument("pulse_id", metavar="PULSE_ID", help="the waiting pulse's id")
    add_answer_arguments(parser, resume=True)
    add_runtime_arguments(parser)
    parser.set_defaults(func=resume_command)


def resume_command(args: argparse.Namespace) -> int:
    """Handler of ``sea resume``."""
    return asyncio.run(terminable(_resume(args)))


async def _resume(args: argparse.Namespace) -> int:
    if not args.pulse_id.strip():
        raise UsageError("the pulse id is empty (it is printed when the pulse starts waiting)")
    answer = answer_of(args)
    setup = runtime_args(args)
    await check_waiting(args.pulse_id, setup.location)
    async with host_tools(args.tools, args.mcp) as tools:
        store = writable_store(setup.location)
        view = view_of(args)
        try:
            runtime = Runtime(setup.config(store, tools=tools))
            async for event in runtime.astream_resume(args.pulse_id, answer):
                view.show(event)
            status = view.finish()
        finally:
            store.close()
            setup.flush_telemetry()
    return finish(args, view, status, recorded_dirs(setup.library))
