"""Export and import of a persona's messages as JSON lines (one message per line).

Each line holds ``id``, ``uid``, ``persona``, ``thread``, ``thread_title``,
``thread_parent``, ``role``, ``content``, ``tags`` (provenance tags included),
``created_at`` (ISO 8601 with offset), ``pulse_id``, ``scope``, ``playbook``, ``node`` and
``metadata``. Import checks every line before writing and then writes in one transaction,
so a bad file writes nothing.

Import is idempotent: ``uid`` is a message's stable identity, and a message whose uid the
persona already has is skipped (a different message under a known uid is refused). A line
without ``uid`` gets one derived from its role, content, time, pulse and scope, so a file
written by hand imports once too. Imported messages get new ids. A sub-thread keeps its id
when imported into its own persona, else gets an id derived from the source id, so a later
import of the same thread fills the same one; it is created under its parent when the
parent also has messages in the file, else under main.

An import file is input from outside: a line with ``role: "system"`` is refused unless the
caller allows it (``allow_system``, for a persona's own export), and ``created_at`` must be
an ISO 8601 string with a UTC offset, within the years 1-9999 in UTC.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import IO, Any

import orjson

from saimemory.base import MessageStore
from saimemory.errors import ImportFormatError, InvalidMessageError
from saimemory.prepare import check_identifier, prepare, provenance, to_micros
from saimemory.records import (
    COMMITTED,
    ENGINE_MEMO,
    MAIN_LINE,
    PROVENANCE_PREFIXES,
    ImportResult,
    Message,
    NewMessage,
    NewThread,
    Thread,
)

REQUIRED = ("role", "content", "tags", "created_at")


def export_lines(store: MessageStore, persona: str) -> Iterator[bytes]:
    """The persona's messages in write order, one JSON document (bytes, no newline) each."""
    threads = {thread.id: thread for thread in store.threads(persona)}
    for message in store.iter_messages(persona):
        yield orjson.dumps(message_record(message, threads.get(message.thread)))


def export_jsonl(store: MessageStore, persona: str, out: IO[bytes]) -> int:
    """Write the persona's messages to ``out``; the number of lines written."""
    count = 0
    for line in export_lines(store, persona):
        out.write(line + b"\n")
        count += 1
    return count


def message_fields(message: Message) -> dict[str, Any]:
    """A stored message as a JSON object (what ``sea memory --json`` prints)."""
    return {
        "id": message.id,
        "uid": message.uid,
        "persona": message.persona,
        "thread": message.thread,
        "role": message.role,
        "content": message.content,
        "tags": list(message.tags),
        "created_at": message.created_at.isoformat(),
        "pulse_id": message.pulse_id,
        "scope": message.scope,
        "line_role": message.line_role,
        "line_scope": message.line_scope,
        "playbook": message.playbook,
        "node": message.node,
        "metadata": dict(message.metadata),
    }


def message_record(message: Message, thread: Thread | None) -> dict[str, Any]:
    """A stored message as one JSON-lines record (the export format)."""
    return {
        **message_fields(message),
        "thread_title": thread.title if thread else None,
        "thread_parent": thread.parent if thread else None,
    }


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    message: NewMessage
    source_persona: str
    thread: str | None
    thread_title: str | None
    thread_parent: str | None


def _optional_str(data: dict[str, Any], key: str, number: int) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ImportFormatError(f"line {number}: {key!r} must be a string or null, got {value!r}")
    return value


def _created_at(value: object, number: int) -> datetime:
    """The line's ``created_at``: an ISO 8601 string with a UTC offset, in years 1-9999
    once in UTC."""
    shown = repr(value)[:60]
    if not isinstance(value, str):
        raise ImportFormatError(
            f"line {number}: created_at {shown} is not a string (ISO 8601 with a UTC offset, "
            "e.g. 2025-06-01T12:00:00+00:00)")
    try:
        created = datetime.fromisoformat(value)
    except (ValueError, OverflowError):
        raise ImportFormatError(
            f"line {number}: created_at {shown} is not ISO 8601 (e.g. "
            "2025-06-01T12:00:00+00:00)") from None
    if created.utcoffset() is None:
        raise ImportFormatError(
            f"line {number}: created_at must be a timezone-aware time: {shown} has no UTC "
            "offset (e.g. 2025-06-01T12:00:00+00:00)")
    try:
        created.astimezone(UTC)
        to_micros(created)
    except (OverflowError, ValueError):
        raise ImportFormatError(
            f"line {number}: created_at {shown} is out of range (years 1-9999 in UTC)") from None
    return created


def _parse(raw: bytes | str, number: int, persona: str | None, allow_system: bool) -> _Line:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ImportFormatError(f"line {number}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ImportFormatError(f"line {number}: expected a JSON object, got {type(data).__name__}")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise ImportFormatError(f"line {number}: missing {', '.join(missing)}")
    if data["role"] == "system" and not allow_system:
        raise ImportFormatError(
            f"line {number}: role 'system' is not imported: system messages are the engine's "
            "own notes, which a file cannot supply (allow them only for your own export)")
    source = _optional_str(data, "persona", number)
    if source is None and persona is None:
        raise ImportFormatError(f"line {number}: no 'persona' (give the persona to import into)")
    created = _created_at(data["created_at"], number)
    tags = data["tags"]
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise ImportFormatError(f"line {number}: tags must be a list of strings")
    target = persona or str(source)
    message = NewMessage(
        persona=target,
        role=data["role"],
        content=data["content"],
        tags=tuple(tag for tag in tags if not tag.startswith(PROVENANCE_PREFIXES)),
        metadata=_imported_metadata(data.get("metadata")),
        pulse_id=_optional_str(data, "pulse_id", number),
        scope=_optional_str(data, "scope", number) or "",
        created_at=created,
        playbook=_optional_str(data, "playbook", number),
        node=_optional_str(data, "node", number),
        uid=_optional_str(data, "uid", number),
        line_role=data.get("line_role") or MAIN_LINE,
        line_scope=data.get("line_scope") or COMMITTED,
    )
    _check_provenance(message, tags, number)
    for key in ("thread", "thread_title", "thread_parent"):
        try:
            check_identifier(data.get(key), key, optional=True)
        except InvalidMessageError as exc:
            raise ImportFormatError(f"line {number}: {exc.message}") from None
    if message.uid is None:
        message = replace(message, uid=derived_uid(message))
    return _Line(number, message, source or target,
                 _optional_str(data, "thread", number),
                 _optional_str(data, "thread_title", number),
                 _optional_str(data, "thread_parent", number))


def _check_provenance(message: NewMessage, tags: list[str], number: int) -> None:
    try:
        prepare(message, datetime.now().astimezone())
    except InvalidMessageError as exc:
        raise ImportFormatError(f"line {number}: {exc.message}") from None
    expected = provenance(message.pulse_id, message.playbook, message.node)
    stray = [t for t in tags if t.startswith(PROVENANCE_PREFIXES) and t not in expected]
    if stray:
        raise ImportFormatError(
            f"line {number}: tags {stray} disagree with pulse_id/playbook/node of the line"
        )


def derived_uid(message: NewMessage) -> str:
    """The uid of an imported line that has none: a digest of what identifies it."""
    assert message.created_at is not None
    key = [message.role, message.content, to_micros(message.created_at), message.pulse_id,
           message.scope]
    return hashlib.sha256(orjson.dumps(key)).hexdigest()[:32]


def import_jsonl(
    store: MessageStore,
    lines: Iterable[bytes | str],
    *,
    persona: str | None = None,
    allow_system: bool = False,
) -> ImportResult:
    """Check every line, then write in one transaction the messages the store lacks.

    ``persona`` imports into another persona than the one named in the lines.
    ``allow_system`` accepts ``role: "system"`` lines (a persona's own export may have
    them); otherwise such a line is refused. Raises :class:`ImportFormatError` naming the
    first bad line (a refused role, a bad time, tag or field), or the store's error (a uid
    conflict, a thread of another persona); nothing is written then.
    """
    parsed = [
        _parse(raw, number, persona, allow_system)
        for number, raw in enumerate(lines, start=1)
        if (raw.strip() if isinstance(raw, str) else raw.strip())
    ]
    described = {(line.source_persona, line.thread) for line in parsed if _is_sub(line)}
    threads: dict[str, NewThread] = {}
    messages = []
    for line in parsed:
        thread = _target_thread(line, described)
        if thread is not None:
            threads[thread.id] = thread
        messages.append(replace(line.message, thread=thread.id if thread else None))
    return store.import_messages(messages, list(threads.values()))


def _target_thread(line: _Line, described: set[tuple[str, str | None]]) -> NewThread | None:
    """The sub-thread a line lands in (None: the main thread), under its parent when the
    file describes the parent too, else under main."""
    if not _is_sub(line):
        return None
    assert line.thread is not None and line.thread_parent is not None
    persona, source = line.message.persona, line.source_persona
    parent = line.thread_parent
    return NewThread(
        id=_thread_id(persona, source, line.thread),
        persona=persona,
        title=line.thread_title or line.thread,
        parent=_thread_id(persona, source, parent) if (source, parent) in described else None,
    )


def _is_sub(line: _Line) -> bool:
    """Whether a line is in a sub-thread (a thread with a parent); others go to main."""
    return line.thread is not None and line.thread_parent is not None


def _thread_id(persona: str, source_persona: str, source: str) -> str:
    """Where a source sub-thread lands: its own id in its own persona, else a derived id."""
    if persona == source_persona:
        return source
    return f"{persona}:{hashlib.sha256(source.encode()).hexdigest()[:16]}"


def _imported_metadata(given: Any) -> Any:
    """A line's metadata without :data:`~saimemory.records.ENGINE_MEMO`: an imported message
    never speaks for the engine, whatever the file says (a value that is not an object is
    left for the message checks to refuse)."""
    if not isinstance(given, dict):
        return given or {}
    return {key: value for key, value in given.items() if key != ENGINE_MEMO}
