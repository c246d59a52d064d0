"""``sea resume``: answer a waiting pulse's approval request and run it to its end.

A pulse started with ``sea run --ask-before TOOL`` waits (status ``waiting``) before the
tool runs; its checkpoints live beside the SQLite store (or in the PostgreSQL store's
database), so any process that opens the same store can continue it. The pulse keeps the
persona, playbook and approval policy it started with.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import orjson

from saimemory import open_store
from sea.cli._setup import store_location
from sea.cli.run import (
    add_runtime_arguments,
    finish,
    models_of,
    recorded_dirs,
    runtime_of,
    search_dirs,
    view_of,
)
from sea.errors import UsageError
from sea.lang.library import PlaybookLibrary


def register(subparsers: Any) -> None:
    """Add ``sea resume``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "resume", help="answer a waiting pulse's approval request and continue it"
    )
    parser.add_argument("pulse_id", metavar="PULSE_ID", help="the waiting pulse's id")
    answer = parser.add_mutually_exclusive_group(required=True)
    answer.add_argument("--approve", action="store_true", help="approve what the pulse asks")
    answer.add_argument("--deny", action="store_true", help="refuse what the pulse asks")
    answer.add_argument(
        "--answer", metavar="JSON", type=_answer,
        help='any other answer the host understands, as JSON (e.g. \'{"approved": true}\')',
    )
    add_runtime_arguments(parser)
    parser.set_defaults(func=resume_command)


def _answer(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc}); e.g. '\"approve\"'") from exc


def resume_command(args: argparse.Namespace) -> int:
    """Handler of ``sea resume``."""
    return asyncio.run(_resume(args))


async def _resume(args: argparse.Namespace) -> int:
    if not args.pulse_id.strip():
        raise UsageError("the pulse id is empty (it is printed when the pulse starts waiting)")
    answer = True if args.approve else False if args.deny else args.answer
    library = PlaybookLibrary.bundled(search_dirs(args.playbooks))
    models = models_of(args)
    location = store_location(args.db)
    store = open_store(location)
    view = view_of(args)
    try:
        runtime = runtime_of(args, store, models, library, location)
        async for event in runtime.astream_resume(args.pulse_id, answer):
            view.show(event)
        status = view.finish()
    finally:
        store.close()
    return finish(args, view, status, recorded_dirs(library))
