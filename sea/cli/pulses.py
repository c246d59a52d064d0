"""``sea pulses``: the pulses that wait for an answer first (on any store: read from the
checkpoints beside a SQLite file or in the PostgreSQL database), then, with a PostgreSQL
store, the submitted pulses, newest last, with their status."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from sea.cli._queue import add_queue_arguments, with_queue
from sea.cli._setup import store_location
from sea.cli._waiting import waiting_at, waiting_line
from sea.host.checkpoints import WaitingPulse
from sea.jsontypes import json_text
from sea.queue.db import NO_QUEUE
from sea.queue.records import STATUSES, PulseRecord, check_status


def register(subparsers: Any) -> None:
    """Add ``sea pulses``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "pulses", help="list the pulses that wait for an answer (any store), then submitted "
        "pulses: queued, running, preempted, waiting, done, failed, dropped (PostgreSQL)"
    )
    parser.add_argument("--persona", help="only this persona's submitted pulses")
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

    location = store_location(args.db)
    listed: set[str] = set()
    if statuses is None or "waiting" in statuses:
        for pulse in asyncio.run(waiting_at(location))[:args.limit]:
            listed.add(pulse.pulse_id)
            print(json_text(waiting_json(pulse)) if args.json else waiting_line(pulse))
    if "://" not in location:  # a SQLite store has no queue: its pulses ran with sea run
        if not listed and not args.json:
            print(f"no pulse waits for an answer in {location}", file=sys.stderr)
        return 0

    async def read(queue: Any) -> list[PulseRecord]:
        found: list[PulseRecord] = await queue.pulses(
            persona=args.persona, status=statuses, limit=args.limit)
        return found

    try:
        records = asyncio.run(with_queue(args, read, install=False))
    except UsageError as exc:
        if exc.code != NO_QUEUE:
            raise
        print(exc.message, file=sys.stderr)  # nothing was submitted: no pulse to list
        return 0
    for record in sorted(records, key=lambda record: record.status != "waiting"):
        if record.id not in listed:
            print(json_text(record.to_json()) if args.json else line_of(record))
    return 0


def waiting_json(pulse: WaitingPulse) -> dict[str, Any]:
    """A waiting pulse as JSON: ``id``, ``status`` (waiting), ``since`` and ``requests``."""
    return {"id": pulse.pulse_id, "status": "waiting", "since": pulse.since,
            "requests": list(pulse.requests)}


def line_of(record: PulseRecord) -> str:
    """One pulse on one line: id, persona, playbook, priority, status, attempts, and its
    error (or why it stopped for another pulse)."""
    when = record.submitted_at.strftime("%Y-%m-%d %H:%M:%S")
    text = (f"{record.id}  {when}  {record.persona.id:<12} {record.playbook:<14} "
            f"{record.priority:<10} {record.status:<9} attempts={record.attempts}")
    if record.error and record.status in ("failed", "queued", "preempted", "dropped"):
        text += f"  {record.error.get('code')}: {record.error.get('message')}"
    return text
