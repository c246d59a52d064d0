"""``sea pulses``: the submitted pulses, newest last, with their status."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from sea.cli._queue import add_queue_arguments, with_queue
from sea.jsontypes import json_text
from sea.queue.records import STATUSES, PulseRecord, check_status


def register(subparsers: Any) -> None:
    """Add ``sea pulses``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "pulses", help="list submitted pulses: queued, running, waiting, done, failed"
    )
    parser.add_argument("--persona", help="only this persona's pulses")
    parser.add_argument("--status", action="append", default=[], choices=STATUSES,
                        help="only pulses with this status (repeatable)")
    parser.add_argument("--limit", type=int, default=50, help="the newest N (default: 50)")
    add_queue_arguments(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.set_defaults(func=pulses_command)


def pulses_command(args: argparse.Namespace) -> int:
    """Handler of ``sea pulses``."""
    from sea.errors import UsageError

    if args.limit < 1:
        raise UsageError(f"--limit must be >= 1, got {args.limit}", code="SEA363")
    statuses = [check_status(s) for s in args.status] or None

    async def read(queue: Any) -> list[PulseRecord]:
        found: list[PulseRecord] = await queue.pulses(
            persona=args.persona, status=statuses, limit=args.limit)
        return found

    for record in asyncio.run(with_queue(args, read)):
        print(json_text(record.to_json()) if args.json else line_of(record))
    return 0


def line_of(record: PulseRecord) -> str:
    """One pulse on one line: id, persona, playbook, status, attempts, and its error."""
    when = record.submitted_at.strftime("%Y-%m-%d %H:%M:%S")
    text = (f"{record.id}  {when}  {record.persona.id:<12} {record.playbook:<14} "
            f"{record.status:<8} attempts={record.attempts}")
    if record.error and record.status in ("failed", "queued"):
        text += f"  {record.error.get('code')}: {record.error.get('message')}"
    return text
