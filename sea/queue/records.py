"""What the queue reports: submitted pulses and schedules, and the ``--every`` syntax."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from saimemory.records import Persona
from sea.errors import UsageError
from sea.jsontypes import nul_pointer

PulseStatus = Literal["queued", "running", "waiting", "done", "failed"]
STATUSES: tuple[PulseStatus, ...] = ("queued", "running", "waiting", "done", "failed")
"""``queued`` (waits for a worker, or for a retry), ``running``, ``waiting`` (for a
person's answer: ``sea pulse resume``), ``done`` (its result is kept), ``failed`` (its
last error is kept)."""

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
        }


@dataclass(frozen=True, slots=True)
class Schedule:
    """A playbook a persona runs every so often, without user input."""

    id: str
    persona: Persona
    playbook: str
    input: str
    every_s: float
    next_at: datetime
    last_pulse: str | None
    runs: int
    """Pulses it submitted."""
    skipped: int
    """Times it was due while its persona was busy (skipped, not queued up)."""

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form (``sea schedule list --json``)."""
        return {
            "id": self.id,
            "persona": self.persona.id,
            "playbook": self.playbook,
            "input": self.input,
            "every_s": self.every_s,
            "next_at": self.next_at.isoformat(),
            "last_pulse": self.last_pulse,
            "runs": self.runs,
            "skipped": self.skipped,
        }


def parse_every(text: str) -> float:
    """Seconds of an interval written ``90``, ``90s``, ``10m``, ``2h`` or ``1d``.

    Raises:
        UsageError: not such an interval, or not positive.
    """
    found = _EVERY.match(text)
    if found is None:
        raise UsageError(
            f"--every {text!r}: expected a number and a unit, e.g. 30s, 10m, 2h or 1d",
            code="SEA363",
        )
    seconds = float(found.group(1)) * _UNIT_S[found.group(2)]
    if seconds <= 0:
        raise UsageError(f"--every {text!r}: the interval must be longer than 0", code="SEA363")
    return seconds


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
