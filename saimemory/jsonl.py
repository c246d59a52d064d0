"""Export and import of a persona's messages as JSON lines (one message per line).

Each line holds ``id``, ``persona``, ``thread``, ``thread_title``, ``thread_parent``,
``role``, ``content``, ``tags`` (provenance tags included), ``created_at`` (ISO 8601 with
offset), ``pulse_id``, ``scope``, ``playbook``, ``node`` and ``metadata``. Import checks
every line before writing and then writes all of them in one transaction, so a bad file
writes nothing. Imported messages get new ids; sub-threads are recreated under new ids
(under their parent when the parent also has messages in the file, else under main).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import IO, Any

import orjson

from saimemory.base import MessageStore
from saimemory.errors import ImportFormatError, InvalidMessageError
from saimemory.prepare import prepare
from saimemory.records import PROVENANCE_PREFIXES, Message, NewMessage, Thread

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


def message_record(message: Message, thread: Thread | None) -> dict[str, Any]:
    """A stored message as one JSON-lines record (the export format)."""
    return {
        "id": message.id,
        "persona": message.persona,
        "thread": message.thread,
        "thread_title": thread.title if thread else None,
        "thread_parent": thread.parent if thread else None,
        "role": message.role,
        "content": message.content,
        "tags": list(message.tags),
        "created_at": message.created_at.isoformat(),
        "pulse_id": message.pulse_id,
        "scope": message.scope,
        "playbook": message.playbook,
        "node": message.node,
        "metadata": dict(message.metadata),
    }


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    message: NewMessage
    thread: str | None
    thread_title: str | None
    thread_parent: str | None


def _optional_str(data: dict[str, Any], key: str, number: int) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ImportFormatError(f"line {number}: {key!r} must be a string or null, got {value!r}")
    return value


def _parse(raw: bytes | str, number: int, persona: str | None) -> _Line:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ImportFormatError(f"line {number}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ImportFormatError(f"line {number}: expected a JSON object, got {type(data).__name__}")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise ImportFormatError(f"line {number}: missing {', '.join(missing)}")
    source = _optional_str(data, "persona", number)
    if source is None and persona is None:
        raise ImportFormatError(f"line {number}: no 'persona' (give the persona to import into)")
    try:
        created = datetime.fromisoformat(str(data["created_at"]))
    except ValueError:
        raise ImportFormatError(
            f"line {number}: created_at {data['created_at']!r} is not ISO 8601") from None
    tags = data["tags"]
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise ImportFormatError(f"line {number}: tags must be a list of strings")
    message = NewMessage(
        persona=persona or str(source),
        role=data["role"],
        content=data["content"],
        tags=tuple(tag for tag in tags if not tag.startswith(PROVENANCE_PREFIXES)),
        metadata=data.get("metadata") or {},
        pulse_id=_optional_str(data, "pulse_id", number),
        scope=_optional_str(data, "scope", number) or "",
        created_at=created,
        playbook=_optional_str(data, "playbook", number),
        node=_optional_str(data, "node", number),
    )
    _check_provenance(message, tags, number)
    return _Line(number, message,
                 _optional_str(data, "thread", number),
                 _optional_str(data, "thread_title", number),
                 _optional_str(data, "thread_parent", number))


def _check_provenance(message: NewMessage, tags: list[str], number: int) -> None:
    try:
        expected = prepare(message, datetime.now().astimezone()).tags
    except InvalidMessageError as exc:
        raise ImportFormatError(f"line {number}: {exc.message}") from None
    stray = [t for t in tags if t.startswith(PROVENANCE_PREFIXES) and t not in expected]
    if stray:
        raise ImportFormatError(
            f"line {number}: tags {stray} disagree with pulse_id/playbook/node of the line"
        )


def import_jsonl(
    store: MessageStore, lines: Iterable[bytes | str], *, persona: str | None = None
) -> list[Message]:
    """Check every line, then append all messages in one transaction; the stored messages.

    ``persona`` imports into another persona than the one named in the lines.
    Raises :class:`ImportFormatError` naming the first bad line; nothing is written then.
    """
    parsed = [
        _parse(raw, number, persona)
        for number, raw in enumerate(lines, start=1)
        if (raw.strip() if isinstance(raw, str) else raw.strip())
    ]
    threads: dict[tuple[str, str], str] = {}
    messages = []
    for line in parsed:
        thread = _target_thread(store, line, threads)
        messages.append(replace(line.message, thread=thread))
    return store.append_many(messages)


def _target_thread(
    store: MessageStore, line: _Line, made: dict[tuple[str, str], str]
) -> str | None:
    """The target thread of a line: main for a thread without parent (the source's main
    thread, or no thread given), else a sub-thread recreated once per source thread."""
    source = line.thread
    if source is None or line.thread_parent is None:
        return None
    target_persona = line.message.persona
    key = (target_persona, source)
    if key not in made:
        parent = made.get((target_persona, line.thread_parent or ""))
        made[key] = store.create_thread(
            target_persona, title=line.thread_title or source, parent=parent
        ).id
    return made[key]
