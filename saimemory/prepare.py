"""Checks a :class:`NewMessage` and turns it into the row a backend writes.

Both backends call :func:`prepare` before touching the database, so bad input is
rejected the same way everywhere and nothing half-written is left behind.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

import orjson

from saimemory.errors import InvalidMessageError
from saimemory.records import (
    LINE_ROLES,
    LINE_SCOPES,
    PROVENANCE_PREFIXES,
    ROLES,
    LineRole,
    LineScope,
    Message,
    NewMessage,
    Role,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_ID_CHARS = 200
"""Longest persona id, pulse id, scope, playbook name, node id, thread id or tag."""


@dataclass(frozen=True, slots=True)
class PreparedMessage:
    """A checked message: what goes into the ``messages`` and ``message_tags`` tables.
    ``tags`` are the message's own, the ones stored; its ``pulse:``/``playbook:``/``node:``
    tags follow from its columns (:func:`provenance`) and are never stored."""

    persona: str
    thread: str | None
    role: Role
    content: str
    created_us: int
    pulse_id: str | None
    scope: str
    playbook: str | None
    node: str | None
    tags: tuple[str, ...]
    metadata_json: str
    uid: str
    line_role: LineRole
    line_scope: LineScope

    def to_message(self, message_id: int, thread: str) -> Message:
        """The stored message once the backend knows its id and thread."""
        return Message(  # positionally (keywords cost a dict a call), in the fields' order
            message_id, self.persona, thread, self.role, self.content,
            from_micros(self.created_us), self.pulse_id, self.scope,
            (*self.tags, *provenance(self.pulse_id, self.playbook, self.node)),
            orjson.loads(self.metadata_json), self.uid, self.playbook, self.node,
            self.line_role, self.line_scope,
        )


def to_micros(moment: datetime) -> int:
    """Microseconds since the Unix epoch of a timezone-aware datetime."""
    return (moment - EPOCH) // timedelta(microseconds=1)


def from_micros(micros: int) -> datetime:
    """The UTC datetime of microseconds since the Unix epoch."""
    return EPOCH + timedelta(0, 0, micros)  # positionally: days, seconds, microseconds


def check_identifier(value: object, what: str, *, optional: bool = False) -> str | None:
    """A short non-empty string without NUL characters (``None`` allowed when optional)."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidMessageError(f"{what} must be a non-empty string, got {value!r}")
    if "\x00" in value or len(value) > MAX_ID_CHARS:
        raise InvalidMessageError(
            f"{what} must be at most {MAX_ID_CHARS} characters without NUL, got {value[:40]!r}…"
        )
    return value


def _check_tags(tags: object) -> list[str]:
    if isinstance(tags, str) or not isinstance(tags, tuple | list):
        raise InvalidMessageError(f"tags must be a tuple of strings, got {tags!r}")
    checked: list[str] = []
    for tag in tags:
        name = check_identifier(tag, "a tag")
        assert name is not None
        if name != name.strip():
            raise InvalidMessageError(f"tag {name!r} has leading or trailing whitespace")
        if name.startswith(PROVENANCE_PREFIXES):
            raise InvalidMessageError(
                f"tag {name!r}: the store adds pulse:/playbook:/node: tags itself; "
                "pass pulse_id, playbook and node instead"
            )
        if name not in checked:
            checked.append(name)
    return checked


@lru_cache(maxsize=1024)
def provenance(pulse_id: str | None, playbook: str | None, node: str | None) -> tuple[str, ...]:
    """The tags a message has from its pulse, playbook and node, after its own tags: derived
    on every read, so a store keeps only the message's own tags (a million messages wrote
    three million more tag rows, and an append their index entries). Cached: the messages
    a read returns share a few pulses, playbooks and nodes (0.1 µs a message, not 0.4)."""
    values = (pulse_id, playbook, node)  # in PROVENANCE_PREFIXES' order
    return tuple(f"{prefix}{value}" for prefix, value in zip(PROVENANCE_PREFIXES, values,
                                                             strict=True) if value is not None)


def _metadata_json(metadata: Mapping[str, Any]) -> str:
    if not isinstance(metadata, Mapping):
        raise InvalidMessageError(f"metadata must be a mapping, got {type(metadata).__name__}")
    try:
        return orjson.dumps(dict(metadata)).decode()
    except TypeError as exc:
        raise InvalidMessageError(f"metadata is not JSON-serializable: {exc}") from None


def _created_us(created_at: datetime | None, now: datetime) -> int:
    if created_at is None:
        return to_micros(now)
    if not isinstance(created_at, datetime) or created_at.tzinfo is None:
        raise InvalidMessageError(
            f"created_at must be a timezone-aware datetime, got {created_at!r}"
        )
    return to_micros(created_at)


def prepare(message: NewMessage, now: datetime) -> PreparedMessage:
    """Check every field of ``message``; raise :class:`InvalidMessageError` naming the problem."""
    check_identifier(message.persona, "persona")
    if message.role not in ROLES:
        raise InvalidMessageError(f"role must be one of {', '.join(ROLES)}, got {message.role!r}")
    if not isinstance(message.content, str) or not message.content:
        raise InvalidMessageError(f"content must be a non-empty string, got {message.content!r}")
    if "\x00" in message.content:
        raise InvalidMessageError("content contains a NUL character")
    check_identifier(message.pulse_id, "pulse_id", optional=True)
    check_identifier(message.playbook, "playbook", optional=True)
    check_identifier(message.node, "node", optional=True)
    check_identifier(message.thread, "thread", optional=True)
    check_identifier(message.uid, "uid", optional=True)
    if not isinstance(message.scope, str) or "\x00" in message.scope:
        raise InvalidMessageError(f"scope must be a string, got {message.scope!r}")
    if message.line_role not in LINE_ROLES:
        raise InvalidMessageError(
            f"line_role must be one of {', '.join(LINE_ROLES)}, got {message.line_role!r}")
    if message.line_scope not in LINE_SCOPES:
        raise InvalidMessageError(
            f"line_scope must be one of {', '.join(LINE_SCOPES)}, got {message.line_scope!r}")
    return PreparedMessage(
        persona=message.persona,
        thread=message.thread,
        role=message.role,
        content=message.content,
        created_us=_created_us(message.created_at, now),
        pulse_id=message.pulse_id,
        scope=message.scope,
        playbook=message.playbook,
        node=message.node,
        tags=tuple(_check_tags(message.tags)),
        metadata_json=_metadata_json(message.metadata),
        uid=message.uid if message.uid is not None else uuid.uuid4().hex,
        line_role=message.line_role,
        line_scope=message.line_scope,
    )
