"""``sea pulse show ID`` and ``sea pulse resume ID``: one submitted pulse."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from sea.cli._answers import add_answer_arguments, answer_of
from sea.cli._queue import add_queue_arguments, no_empty, with_queue
from sea.jsontypes import json_text
from sea.queue.records import PulseRecord


def register(subparsers: Any) -> None:
    """Add ``sea pulse``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "pulse", help="show a submitted pulse, or answer one that waits"
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="a pulse's status, result or error")
    show.add_argument("pulse_id", metavar="PULSE_ID")
    add_queue_arguments(show)
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.set_defaults(func=show_command)
    resume = actions.add_parser(
        "resume", help="answer a waiting pulse's approval request; a worker runs the rest")
    resume.add_argument("pulse_id", metavar="PULSE_ID")
    add_answer_arguments(resume, resume=True)
    add_queue_arguments(resume)
    resume.set_defaults(func=resume_command)


def show_command(args: argparse.Namespace) -> int:
    """Handler of ``sea pulse show``."""
    pulse_id = no_empty(args.pulse_id, "pulse id")

    async def read(queue: Any) -> PulseRecord:
        record: PulseRecord = await queue.pulse(pulse_id)
        return record

    record = asyncio.run(with_queue(args, read, install=False))
    if args.json:
        print(json_text(record.to_json()))
        return 0
    print(describe(record))
    return 1 if record.status in ("failed", "dropped") else 0


def resume_command(args: argparse.Namespace) -> int:
    """Handler of ``sea pulse resume``."""
    pulse_id = no_empty(args.pulse_id, "pulse id")
    answer = answer_of(args)

    async def resume(queue: Any) -> None:
        await queue.resume(pulse_id, answer)

    asyncio.run(with_queue(args, resume, install=False))
    print(f"pulse {pulse_id}: answer queued; `sea pulse show {pulse_id}` follows it")
    return 0


def describe(record: PulseRecord) -> str:
    """A pulse for people: who, what, status, attempts, and what it said or how it failed."""
    lines = [
        f"pulse     {record.id}",
        f"persona   {record.persona.id}",
        f"playbook  {record.playbook}",
        f"input     {record.input!r}",
        f"status    {record.status} (attempts: {record.attempts})",
        f"priority  {record.priority}",
        f"submitted {record.submitted_at.isoformat()}",
    ]
    if record.ended_at is not None:
        lines.append(f"ended     {record.ended_at.isoformat()}")
    if record.worker:
        lines.append(f"worker    {record.worker}")
    result = record.result or {}
    for text in result.get("spoken") or []:
        lines.append(f"said      {text}")
    if record.status == "waiting" and result.get("approval"):
        lines.append(f"waits for {json_text(result['approval'])}")
        lines.append(f"approve   sea pulse resume {record.id} --approve")
        lines.append(f"deny      sea pulse resume {record.id} --deny")
    if record.error:
        label = {"failed": "error", "preempted": "stopped", "dropped": "dropped"}.get(
            record.status, "last error")
        lines.append(f"{label:<9} {record.error.get('code')}: {record.error.get('message')}")
    return "\n".join(lines)
