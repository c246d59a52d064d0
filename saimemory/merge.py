"""Which messages of an import a store already has, by ``(persona, uid)``.

A message whose uid the persona already has is the same message when role, content and
time agree: it is skipped, so importing one export twice writes it once. A different
message under a known uid is refused, naming the uid, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence

from saimemory.errors import InvalidMessageError
from saimemory.prepare import PreparedMessage
from saimemory.tx import Tx

CHUNK = 500

Identity = tuple[str, str, int]
"""What must agree for two messages with one uid to be the same: role, content, time."""


def _identity(row: PreparedMessage) -> Identity:
    return (row.role, row.content, row.created_us)


def _stored(tx: Tx, persona: str, uids: list[str]) -> dict[str, Identity]:
    found: dict[str, Identity] = {}
    for start in range(0, len(uids), CHUNK):
        chunk = uids[start:start + CHUNK]
        marks = ", ".join("?" * len(chunk))
        for uid, role, content, created_us in tx.fetch(
            "SELECT uid, role, content, created_us FROM messages "
            f"WHERE persona = ? AND uid IN ({marks})",
            [persona, *chunk],
        ):
            found[uid] = (role, content, int(created_us))
    return found


def unseen(tx: Tx, rows: Sequence[PreparedMessage]) -> tuple[list[PreparedMessage], int]:
    """The rows the store (and the rows before them) do not have yet, and how many were
    skipped as already there. Raises :class:`InvalidMessageError` on a uid conflict."""
    by_persona: dict[str, list[str]] = {}
    for row in rows:
        by_persona.setdefault(row.persona, []).append(row.uid)
    known = {
        (persona, uid): identity
        for persona, uids in by_persona.items()
        for uid, identity in _stored(tx, persona, list(dict.fromkeys(uids))).items()
    }
    fresh: list[PreparedMessage] = []
    for row in rows:
        key = (row.persona, row.uid)
        if key not in known:
            known[key] = _identity(row)
            fresh.append(row)
        elif known[key] != _identity(row):
            raise InvalidMessageError(
                f"persona {row.persona!r} already has a different message with uid "
                f"{row.uid!r} (role, content or created_at differ); nothing was written"
            )
    return fresh, len(rows) - len(fresh)
