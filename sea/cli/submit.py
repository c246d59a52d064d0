"""``sea submit``: queue a pulse for the workers (PostgreSQL, the workers extra)."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from sea.cli._queue import (
    add_persona_arguments,
    add_queue_arguments,
    check_playbook,
    json_object,
    with_queue,
)
from sea.cli._setup import load_persona
from sea.host.turns import PRIORITIES
from sea.jsontypes import json_text

DEFAULT_PLAYBOOK = "meta_user"


def register(subparsers: Any) -> None:
    """Add ``sea submit``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "submit", help="queue a pulse for the workers (`sea worker`); prints its id"
    )
    parser.add_argument(
        "playbook", nargs="?", default=DEFAULT_PLAYBOOK, metavar="PLAYBOOK",
        help=f"playbook name (default: {DEFAULT_PLAYBOOK})",
    )
    parser.add_argument("--input", "-i", default="", help="what the user says")
    parser.add_argument("--args", type=json_object, default=None, metavar="JSON",
                        help="the playbook's arguments, a JSON object")
    parser.add_argument("--priority", choices=tuple(PRIORITIES), default="user",
                        help="a person's turn (user, default), an autonomous one or a "
                        "scheduled one: a persona's pulses run by priority, and a higher one "
                        "makes a running lower one stop at its next node")
    add_persona_arguments(parser)
    add_queue_arguments(parser)
    parser.add_argument("--json", action="store_true", help='print {"pulse_id": ...}')
    parser.set_defaults(func=submit_command)


def submit_command(args: argparse.Namespace) -> int:
    """Handler of ``sea submit``."""
    check_playbook(args.playbook, args.playbooks)
    persona = load_persona(args.persona_file, args.persona)

    async def submit(queue: Any) -> str:
        pulse_id: str = await queue.submit(persona, args.playbook, args.input, args=args.args,
                                           priority=args.priority)
        return pulse_id

    pulse_id = asyncio.run(with_queue(args, submit))
    print(json_text({"pulse_id": pulse_id}) if args.json else pulse_id)
    return 0
