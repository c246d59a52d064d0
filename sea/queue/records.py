"""What the queue reports: submitted pulses and schedules, and the ``--every`` syntax."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from saimemory.records import Persona
from sea.errors import UsageError
from sea.host.turns import Priority
from sea.jsontypes import nul_pointer

PulseStatus = Literal["queued", "running", "preempted", "waiting", "done", "failed", "dropped"]
STATUSES: tuple[PulseStatus, ...] = ("queued", "running", "preempted", "waiting", "done",
                                     "failed", "dropped")
"""``queued`` (waits for a worker, or for a retry), ``running``, ``preempted`` (it stopped
for a pulse of its persona of higher priority and waits to go on from its checkpoint after
it), ``waiting`` (for a person's answer: ``sea pulse resume``), ``done`` (its result is
kept), ``failed`` (its last error is kept), ``dropped`` (it stopped for a pulse of higher
priority and its worker's ``when_preempted="drop"`` ended it: ``error`` names that pulse;
what it stored stays)."""
TO_RUN: tuple[PulseStatus, ...] = ("queued", "running", "preempted")
"""The statuses of a pulse a job still runs."""

_EVERY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d)?\s*$")
_UNIT_S = {None: 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass(frozen=True, slots=True)
class PulseRecord:
    """A submitted pulse as the queue keeps it."""

    id: str
    persona: Persona
    playbook: str
    input: str
    args: dict[str, Any]
    status: PulseStatus
    attempts: int
    """How many times a worker started it."""
    submitted_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    result: dict[str, Any] | None
    """``{status, spoken, outputs, texts, usage, handled_errors}`` once done or waiting."""
    error: dict[str, Any] | None
    """The last error (``{code, message, playbook, node}``), also while a retry is queued."""
    schedule_id: str | None = None
    worker: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    """How it runs beyond its input: ``thread`` (a memory thread of the persona),
    ``input_uid``, ``input_metadata`` (see ``Runtime.astream_pulse``)."""
    priority: Priority = "user"
    """``user``, ``autonomous`` or ``scheduled``: a persona's queued pulses run by
    priority, then in submission order, and a higher one preempts a running lower one."""

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form (``sea pulses --json``, ``sea pulse show --json``)."""
        return {
            "id": self.id,
            "persona": self.persona.id,
            "playbook": self.playbook,
            "input": self.input,
            "args": self.args,
            "status": self.status,
            "attempts": self.attempts,
            "submitted_at": self.submitted_at.isoformat(),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "result": self.result,
            "error": self.error,
            "schedule_id": self.schedule_id,
            "worker": self.worker,
            "priority": self.priority,
        }


@dataclass(frozen=True, slots=True)
class Schedule:
    """A playbook a persona runs every so often, without user input."""

    id: str
    persona: Persona
    playbook: str
    input: str
    every_s: float
    next_at: datetime | None
    """When it is due next (None: a date out of range, left by a hand edit)."""
    last_pulse: str | None
    runs: int
    """Pulses it submitted."""
    skipped: int
    """Times it was due while its persona was busy (skipped, not queued up)."""
    error: str | None = None
    """Why the workers stopped running it (a broken row, SEA366), if they did."""
    priority: Priority = "scheduled"
    """The priority of the pulses it submits."""

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form (``sea schedule list --json``)."""
        return {
            "id": self.id,
            "persona": self.persona.id,
            "playbook": self.playbook,
            "input": self.input,
            "every_s": self.every_s,
            "next_at": self.next_at.isoformat() if self.next_at else None,
            "last_pulse": self.last_pulse,
            "runs": self.runs,
            "skipped": self.skipped,
            "error": self.error,
            "priority": self.priority,
        }


CEILING_S = 36_600 * 86_400.0
"""The longest interval any schedule may have (36600d, about a century): its next run
time stays far inside the dates Python and PostgreSQL hold."""


def span(seconds: float) -> str:
    """An interval as ``--every`` writes it: ``366d``, ``2h``, ``10m``, ``1.5s``."""
    for unit, size in (("d", 86_400.0), ("h", 3_600.0), ("m", 60.0)):
        if seconds >= size and (seconds / size).is_integer():
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


@dataclass(frozen=True, slots=True)
class IntervalBounds:
    """The shortest and the longest interval a schedule may be added with.

    Attributes:
        min_s: The shortest (default 1 s: the workers look at the schedules every
            ``--tick``, 1 s by default); ``sea schedule add --min-every`` lowers it.
        max_s: The longest (default 366 days); ``sea schedule add --max-every`` raises
            it, up to :data:`CEILING_S`.

    Raises:
        UsageError: a bound is not a finite number of seconds > 0, ``max_s`` is past
            :data:`CEILING_S`, or ``min_s`` is longer than ``max_s`` (SEA363).
    """

    min_s: float = 1.0
    max_s: float = 366 * 86_400.0

    def __post_init__(self) -> None:
        shortest = "the shortest interval (--min-every, IntervalBounds.min_s)"
        longest = "the longest interval (--max-every, IntervalBounds.max_s)"
        for name, value in ((shortest, self.min_s), (longest, self.max_s)):
            if not (math.isfinite(value) and value > 0):
                raise UsageError(f"{name} must be longer than 0 and finite, not {value!r}",
                                 code="SEA363")
        if self.max_s > CEILING_S:
            raise UsageError(f"{longest} is {span(self.max_s)}; it can be at most "
                             f"{span(CEILING_S)} (about a century)", code="SEA363")
        if self.min_s > self.max_s:
            raise UsageError(f"{shortest} {span(self.min_s)} is longer than the longest "
                             f"(--max-every) {span(self.max_s)}", code="SEA363")

    def check(self, seconds: float, what: str) -> float:
        """``seconds`` if it is within the bounds (``what`` names it in the message).

        Raises:
            UsageError: it is shorter or longer (SEA363).
        """
        if seconds < self.min_s:
            raise UsageError(
                f"{what}: the interval is {span(seconds)}; a schedule runs at least "
                f"{span(self.min_s)} apart (the workers look at the schedules every --tick "
                "seconds): give a longer one, or lower the bound with --min-every "
                "(IntervalBounds.min_s)", code="SEA363")
        if seconds > self.max_s:
            raise UsageError(
                f"{what}: the interval is {span(seconds)}; a schedule runs at most "
                f"{span(self.max_s)} apart: give a shorter one, or raise the bound with "
                f"--max-every (IntervalBounds.max_s, at most {span(CEILING_S)})",
                code="SEA363")
        return seconds


def parse_every(text: str, bounds: IntervalBounds | None = None,
                option: str = "--every") -> float:
    """Seconds of an interval written ``90``, ``90s``, ``10m``, ``2h`` or ``1d``, within
    ``bounds``.

    Args:
        text: The interval.
        bounds: The shortest and longest allowed (default :class:`IntervalBounds`).
        option: The option it came from, to name in the messages.

    Raises:
        UsageError: not such an interval, not a finite number > 0, or out of the bounds
            (SEA363).
    """
    seconds = interval_seconds(text, option)
    return (bounds or IntervalBounds()).check(seconds, f"{option} {_quoted(text)}")


def interval_seconds(text: str, option: str) -> float:
    """Seconds of an interval written as ``--every`` takes it, without the bounds
    (for the bounds themselves, ``--min-every`` and ``--max-every``).

    Raises:
        UsageError: not such an interval, or not a finite number > 0 (SEA363).
    """
    found = _EVERY.match(text)
    if found is None:
        raise UsageError(
            f"{option} {_quoted(text)}: expected a number and a unit, e.g. 30s, 10m, 2h or 1d",
            code="SEA363",
        )
    seconds = float(found.group(1)) * _UNIT_S[found.group(2)]
    if not math.isfinite(seconds):
        raise UsageError(f"{option} {_quoted(text)}: expected a finite number of seconds",
                         code="SEA363")
    if seconds <= 0:
        raise UsageError(f"{option} {_quoted(text)}: the interval must be longer than 0",
                         code="SEA363")
    return seconds


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


def due_run(
    schedule_id: str, persona_data: Any, every_s: float, due: datetime | None, now: datetime
) -> tuple[Persona, datetime]:
    """The persona of a due schedule's row and when the schedule is due next (one
    interval on, or one interval from ``now`` when the workers were away for longer:
    missed runs are not made up).

    The row is read as the database holds it, which an older version or a hand edit may
    have left with an interval or a persona no schedule can have.

    Raises:
        UsageError: the row cannot run, saying why and how to replace it (SEA366).
    """

    def broken(why: str) -> UsageError:
        return UsageError(
            f"schedule {schedule_id} cannot run: {why}; the workers no longer run it: "
            f"remove it (sea schedule remove {schedule_id}) and add it again", code="SEA366")

    if not (isinstance(persona_data, dict) and isinstance(persona_data.get("id"), str)
            and persona_data["id"] and all(isinstance(persona_data.get(key, ""), str)
                                           for key in ("name", "system_prompt"))):
        raise broken(f"its persona {_quoted(str(persona_data))} is not an object with a "
                     "non-empty id and text name and system_prompt")
    if due is None:
        raise broken("its next run time is out of the range of dates")
    if not (math.isfinite(every_s) and every_s > 0):
        raise broken(f"its interval {every_s!r} s is not a finite number of seconds > 0")
    try:
        step = timedelta(seconds=every_s)
        following = due + step
        following = following if following > now else now + step
    except OverflowError:
        raise broken(f"its interval {every_s:g} s takes its next run time past the last "
                     "date") from None
    return persona_of(persona_data), following


def check_status(text: str) -> PulseStatus:
    """A pulse status as given on the command line.

    Raises:
        UsageError: not one of :data:`STATUSES`.
    """
    if text not in STATUSES:
        raise UsageError(
            f"unknown status {text!r}: expected one of {', '.join(STATUSES)}", code="SEA363"
        )
    return text


def job_priority(rank: int, *, going_on: bool = False) -> int:
    """The procrastinate priority of a pulse's job: twice its rank, one more for a pulse
    that goes on after it was preempted (first in line among its own priority). A job
    outranks a running pulse of ``rank`` when its priority is at least
    ``job_priority(rank + 1)``."""
    return 2 * rank + int(going_on)


def persona_json(persona: Persona) -> dict[str, str]:
    """A persona as a row keeps it."""
    return {"id": persona.id, "name": persona.name, "system_prompt": persona.system_prompt}


def storable(**texts: Any) -> None:
    """Refuse text the queue cannot keep: a NUL character anywhere in a value (PostgreSQL's
    text and ``jsonb`` cannot hold it). Each keyword names the value for the message, the
    persona's fields and the playbook's arguments as JSON pointers into them.

    Raises:
        UsageError: a value holds a NUL character (SEA368); nothing is queued.
    """
    for what, value in texts.items():
        at = nul_pointer(value)
        if at is not None:
            where = f" at {at}" if at else ""
            raise UsageError(
                f"a NUL character in the pulse's {what}{where}: the queue cannot store it "
                "(PostgreSQL text cannot hold NUL); remove it and try again", code="SEA368")


def persona_of(data: dict[str, Any]) -> Persona:
    """A persona from a row."""
    return Persona(str(data["id"]), str(data.get("name", data["id"])),
                   str(data.get("system_prompt", "")))
