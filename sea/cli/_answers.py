"""How the command line answers a pulse that waits for a person.

``sea resume PULSE_ID`` answers with ``--approve [all|low|medium|IDS]``, ``--deny`` or
``--answer JSON``; ``sea run`` takes ``--approve``/``--deny`` too (for scripts: the pulse is
answered as soon as it waits and runs on), and without them, on a terminal, asks the person
at it. The answers are those of :mod:`sea.engine.answers`: ``--approve`` (or ``all``)
approves everything asked about, ``low``/``medium`` only the plan specs of at most that
risk, ``1,3`` those spec ids; ``--deny`` refuses. ``--approver`` and ``--reason`` travel
with the answer (an approval records its approver).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TextIO

import orjson

from sea.engine.events import ApprovalRequested, Event, PulseEnded

MAX_ANSWERS = 20
"""The most answers ``sea run`` gives one pulse (a pulse that keeps asking stays waiting)."""

_IDS = re.compile(r"\d+(?:\s*,\s*\d+)*")


def approve_value(text: str) -> str:
    """An ``--approve`` value: ``all``, ``low``, ``medium``, ``high`` or spec ids ``1,3``."""
    word = text.strip().lower()
    if word in ("all", "low", "medium", "high") or _IDS.fullmatch(word):
        return word
    raise argparse.ArgumentTypeError(
        f"expected all, low, medium, high or spec ids such as 1,3; got {text!r}")


def add_answer_arguments(parser: argparse.ArgumentParser, *, resume: bool) -> None:
    """``--approve [WHAT]``, ``--deny``, ``--approver``, ``--reason`` (and for ``sea resume``,
    where one answer is required, ``--answer JSON``)."""
    group = parser.add_mutually_exclusive_group(required=resume)
    group.add_argument(
        "--approve", nargs="?", const="all", type=approve_value, metavar="all|low|IDS",
        help="approve what the pulse asks: everything (the default), only the plan specs of "
        "at most low (or medium) risk, or these spec ids (e.g. 1,3)",
    )
    group.add_argument("--deny", action="store_true", help="refuse what the pulse asks")
    if resume:
        group.add_argument(
            "--answer", metavar="JSON", type=_json,
            help='any other answer the host understands, as JSON (e.g. \'{"ids": ["2"]}\')',
        )
    parser.add_argument("--approver", metavar="NAME",
                        help="who answers (recorded with a plan's approval; default: user)")
    parser.add_argument("--reason", metavar="TEXT", help="why (recorded with the answer)")


def answer_of(args: argparse.Namespace) -> Any | None:
    """The answer the options give, or None when they give none."""
    given = getattr(args, "answer", None)
    if given is not None:
        return given
    extra = {key: value for key, value in (("approver", args.approver),
                                           ("reason", args.reason)) if value}
    if args.deny:
        return {"approved": False, **extra}
    if args.approve is None:
        return None
    what: str = args.approve
    if what == "all":
        return {"all": True, **extra}
    if what in ("low", "medium", "high"):
        return {"up_to": what, **extra}
    return {"ids": [item.strip() for item in what.split(",")], **extra}


def _json(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc}); e.g. '\"approve\"'") from exc


Asker = Callable[[dict[str, Any]], Any | None]
"""Asks a person about a request; their answer, or None to leave the pulse waiting."""


@dataclass(frozen=True, slots=True)
class Answering:
    """How ``sea run`` answers a pulse that waits: with the options' answer, by asking the
    person at the terminal, or not at all (it stays waiting)."""

    answer: Any | None = None
    ask: Asker | None = None

    async def drive(
        self,
        first: AsyncIterator[Event],
        resume: Callable[[Any], AsyncIterator[Event]],
        take: Callable[[Event], None],
    ) -> None:
        """Feed every event of ``first`` to ``take``; while the pulse then waits and an
        answer is at hand, resume it with that answer (``resume(answer)``) and go on."""
        events = first
        for _ in range(MAX_ANSWERS + 1):
            waiting: dict[str, Any] | None = None
            async for event in events:
                take(event)
                if isinstance(event, ApprovalRequested):
                    waiting = event.request
                elif isinstance(event, PulseEnded) and event.status != "waiting":
                    waiting = None
            if waiting is None:
                return
            answer = self.answer
            if answer is None and self.ask is not None:
                answer = await asyncio.to_thread(self.ask, waiting)
            if answer is None:
                return
            events = resume(answer)


def prompt_line(prompt: str, stream: TextIO | None = None, err: TextIO | None = None) -> str:
    """Print ``prompt`` on stderr (stdout holds the reply) and read one line of stdin."""
    print(prompt, end="", file=err or sys.stderr, flush=True)
    return (stream or sys.stdin).readline()


def terminal_asker(
    read: Callable[[str], str] = prompt_line,
    err: TextIO | None = None,
    before: Callable[[], None] | None = None,
) -> Asker:
    """Asks at a terminal: ``a`` (all), ``l`` (low risk only), spec ids ``1,3``, ``d``
    (deny), or nothing (leave the pulse waiting); ``before`` is called first (the view stops
    its live status line, so the prompt is printed as it is and nothing redraws under it)."""

    def ask(request: dict[str, Any]) -> Any | None:
        if before is not None:
            before()
        plan = "plan_approval" in request
        choices = "[a]ll, [l]ow risk only, spec ids (1,3), [d]eny" if plan else "[a]pprove, [d]eny"
        try:
            text = read(f"approve? {choices}, or Enter to leave it waiting: ")
        except EOFError:
            return None
        word = text.strip().lower()
        if word in ("a", "all", "y", "yes", "approve"):
            return {"all": True}
        if word in ("d", "deny", "n", "no"):
            return {"approved": False}
        if plan and word in ("l", "low"):
            return {"up_to": "low"}
        if plan and _IDS.fullmatch(word):
            return {"ids": [item.strip() for item in word.split(",")]}
        if word:
            print(f"not understood: {word!r}; the pulse is left waiting", file=err or sys.stderr)
        return None

    return ask
