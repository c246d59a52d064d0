"""The pulses that wait for an answer, read from the checkpoints of a store (beside a SQLite
file, or in the PostgreSQL database): for ``sea pulses`` and for ``sea resume`` to name the
waiting ones when it is given an id that does not wait."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sea.cli._setup import checkpoint_location
from sea.cli._text import printable
from sea.errors import UsageError
from sea.host.checkpoints import (
    PostgresCheckpoints,
    SqliteCheckpoints,
    WaitingPulse,
    waiting_pulses,
)

NOT_WAITING = "SEA391"
"""``sea resume`` was given an id no pulse waits with."""


async def waiting_at(location: str) -> list[WaitingPulse]:
    """The waiting pulses of the store at ``location``, the longest waiting first (a store
    without checkpoints, a SQLite file or a PostgreSQL schema, has none; nothing is
    created)."""
    where = checkpoint_location(location)
    checkpoints: Any
    if "://" in where:
        checkpoints = PostgresCheckpoints(where, linger=0)
        if not await _postgres_has_checkpoints(checkpoints):
            return []
    else:
        if not Path(where).is_file():
            return []
        checkpoints = SqliteCheckpoints(where, linger=0)
    async with checkpoints.saver() as saver:
        return await waiting_pulses(saver)


def waiting_line(pulse: WaitingPulse) -> str:
    """One waiting pulse: its id, since when, and what it waits on."""
    return printable(f"{pulse.pulse_id}  {pulse.since[:19].replace('T', ' ')}  waiting  "
                     f"{what_it_waits_on(pulse)}")


def what_it_waits_on(pulse: WaitingPulse) -> str:
    """A plan's title, or an action and where it runs."""
    for request in pulse.requests:
        plan = request.get("plan_approval")
        if isinstance(plan, dict):
            return f"plan {plan.get('title')!r} ({plan.get('plan_id')})"
        return (f"{request.get('action', 'an action')} at "
                f"{request.get('playbook', '?')}.{request.get('node', '?')}")
    return "an answer"


async def check_waiting(pulse_id: str, location: str) -> None:
    """Refuse an id no pulse waits with, naming those that do.

    Raises:
        UsageError: no pulse waits with ``pulse_id`` in this store (SEA391).
    """
    waiting = await waiting_at(location)
    if any(pulse.pulse_id == pulse_id for pulse in waiting):
        return
    if waiting:
        listed = "\n".join("  " + waiting_line(pulse) for pulse in waiting[:20])
        more = f"\n  (and {len(waiting) - 20} more: sea pulses)" if len(waiting) > 20 else ""
        these = f"; these do:\n{listed}{more}"
    else:
        these = "; none does (a pulse that ended, or one run with another --db, is not here)"
    raise UsageError(f"pulse {pulse_id!r} is not waiting for an answer: no pulse waits with "
                     f"that id in {location}{these}",
                     code=NOT_WAITING)


async def _postgres_has_checkpoints(checkpoints: PostgresCheckpoints) -> bool:
    """Whether the checkpoint tables exist (opening the saver would create them)."""
    import psycopg

    names = ["checkpoints", "checkpoint_writes"]
    if checkpoints.schema is not None:
        names = [f"{checkpoints.schema}.{name}" for name in names]
    try:
        async with await psycopg.AsyncConnection.connect(checkpoints.dsn, autocommit=True) as conn:
            found = await (await conn.execute(
                "SELECT to_regclass(%s), to_regclass(%s)", names)).fetchone()
    except psycopg.Error as exc:
        raise UsageError(f"cannot read the checkpoints' database: {exc}") from None
    return found is not None and found[0] is not None and found[1] is not None
