"""``sea schedule add|list|remove``: playbooks the workers run for a persona every so often."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from sea.cli._flags import Renamed
from sea.cli._queue import (
    add_persona_arguments,
    add_queue_arguments,
    check_playbook,
    no_empty,
    with_queue,
)
from sea.cli._setup import load_persona
from sea.errors import UsageError
from sea.host.turns import PRIORITIES
from sea.jsontypes import json_text
from sea.queue.records import IntervalBounds, Schedule, interval_seconds, parse_every, span


def register(subparsers: Any) -> None:
    """Add ``sea schedule``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "schedule", help="run a persona's playbook every so often, on the workers"
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add", help="add a schedule (a due run is skipped while the persona is busy)")
    add.add_argument("playbook", nargs="?", default=argparse.SUPPRESS, metavar="PLAYBOOK",
                     help="the playbook's name, e.g. meta_auto")
    add.add_argument("--playbook", action=Renamed, new="PLAYBOOK (the first argument)",
                     dest="playbook", default=None, metavar="PLAYBOOK")
    add.add_argument("--every", required=True, metavar="INTERVAL",
                     help="how often: 30s, 10m, 2h, 1d (from --min-every to --max-every)")
    add.add_argument("--min-every", default="1s", metavar="INTERVAL",
                     help="the shortest interval allowed (default: 1s)")
    add.add_argument("--max-every", default="366d", metavar="INTERVAL",
                     help="the longest interval allowed (default: 366d; at most 36600d)")
    add.add_argument("--input", "-i", default="", help="input text (default: none)")
    add.add_argument("--priority", choices=tuple(PRIORITIES), default="scheduled",
                     help="the priority of its pulses (default: scheduled; a pulse of a "
                     "higher one preempts a running lower one of the persona)")
    add_persona_arguments(add)
    add_queue_arguments(add)
    add.set_defaults(func=add_command)
    listing = actions.add_parser("list", help="the schedules, by when they are next due")
    listing.add_argument("--persona", help="only this persona's schedules")
    add_queue_arguments(listing)
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(func=list_command)
    remove = actions.add_parser("remove", help="stop a schedule")
    remove.add_argument("schedule_id", metavar="SCHEDULE_ID")
    add_queue_arguments(remove)
    remove.set_defaults(func=remove_command)


def add_command(args: argparse.Namespace) -> int:
    """Handler of ``sea schedule add``."""
    bounds = IntervalBounds(interval_seconds(args.min_every, "--min-every"),
                            interval_seconds(args.max_every, "--max-every"))
    every = parse_every(args.every, bounds)
    if args.playbook is None:
        raise UsageError("name the playbook the schedule runs: sea schedule add PLAYBOOK "
                         "--every INTERVAL (e.g. sea schedule add meta_auto --every 10m)")
    check_playbook(args.playbook, args.playbooks)
    persona = load_persona(args.persona_file, args.persona)

    async def add(queue: Any) -> Schedule:
        schedule: Schedule = await queue.add_schedule(
            persona, args.playbook, every, input=args.input, bounds=bounds,
            priority=args.priority)
        return schedule

    schedule = asyncio.run(with_queue(args, add))
    print(schedule.id)
    return 0


def list_command(args: argparse.Namespace) -> int:
    """Handler of ``sea schedule list``."""

    async def read(queue: Any) -> list[Schedule]:
        found: list[Schedule] = await queue.schedules(persona=args.persona)
        return found

    for schedule in asyncio.run(with_queue(args, read, install=False)):
        if args.json:
            print(json_text(schedule.to_json()))
        else:
            due = schedule.next_at.isoformat() if schedule.next_at else "never"
            print(f"{schedule.id}  {schedule.persona.id:<12} {schedule.playbook:<14} "
                  f"every {span(schedule.every_s)}  next {due}  {schedule.priority}  "
                  f"runs={schedule.runs} skipped={schedule.skipped}"
                  + (f"  STOPPED: {schedule.error}" if schedule.error else ""))
    return 0


def remove_command(args: argparse.Namespace) -> int:
    """Handler of ``sea schedule remove``."""
    schedule_id = no_empty(args.schedule_id, "schedule id")

    async def remove(queue: Any) -> None:
        await queue.remove_schedule(schedule_id)

    asyncio.run(with_queue(args, remove, install=False))
    print(f"schedule {schedule_id} removed")
    return 0
