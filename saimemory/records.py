"""Typed records of the store: personas, messages, threads, budgets, search hits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from saimemory.frozen import fast_init
from saimemory.tags import PROVENANCE_PREFIXES as PROVENANCE_PREFIXES  # where it was

Role = Literal["user", "assistant", "system"]
ROLES: tuple[Role, ...] = ("user", "assistant", "system")

ROOT_SCOPE = ""
"""The scope of a pulse's top level. An isolated sub-playbook writes in a scope of its own."""

CONVERSATION_TAG = "conversation"
"""Messages with this tag are the conversation: visible to later pulses."""

LineRole = Literal["main_line", "sub_line", "meta_judgment"]
LINE_ROLES: tuple[LineRole, ...] = ("main_line", "sub_line", "meta_judgment")
"""Which line of thought wrote a message (SAIVerse's ``line_role``): the persona's main line,
a sub line (work done aside), or a judgment about the pulse itself. Only the main line's
conversation is read by later pulses."""
MAIN_LINE: LineRole = "main_line"

LineScope = Literal["committed", "discardable", "volatile"]
LINE_SCOPES: tuple[LineScope, ...] = ("committed", "discardable", "volatile")
"""How long a message matters (SAIVerse's ``scope``): ``committed`` for good, ``discardable``
to its pulse only (kept, never read by a later pulse), ``volatile`` to its pulse only and
deleted when the pulse ends (:meth:`~saimemory.base.MessageStore.drop_volatile`)."""
COMMITTED: LineScope = "committed"


@dataclass(frozen=True, slots=True)
class Persona:
    """Who is thinking: the id that keys the store, a name and the system prompt (Base)."""

    id: str
    name: str
    system_prompt: str = ""


ENGINE_MEMO = "engine_memo"
"""Metadata key the engine sets (``true``) on the user-role messages it wrote itself (memos,
prompts, tool notes): only those may speak with the ``<system>`` marker. An import never
carries it (:func:`saimemory.jsonl.import_jsonl` drops it)."""


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message to append. ``thread`` None means the persona's main thread."""

    persona: str
    role: Role
    content: str
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    pulse_id: str | None = None
    scope: str = ROOT_SCOPE
    thread: str | None = None
    created_at: datetime | None = None
    """None: the store stamps the time of the write (UTC). Otherwise timezone-aware."""
    playbook: str | None = None
    """The playbook that wrote it; the store adds the ``playbook:<name>`` tag."""
    node: str | None = None
    """The node that wrote it; the store adds the ``node:<id>`` tag."""
    uid: str | None = None
    """None: the store draws a new uid. An import passes the exported one (see ``Message.uid``)."""
    line_role: LineRole = MAIN_LINE
    """The line that wrote it (see :data:`LINE_ROLES`)."""
    line_scope: LineScope = COMMITTED
    """How long it matters (see :data:`LINE_SCOPES`)."""


@fast_init  # read a hundred at a time: built through its slots
@dataclass(frozen=True, slots=True)
class Message:
    """A stored message. ``id`` grows with write order within a store."""

    id: int
    persona: str
    thread: str
    role: Role
    content: str
    created_at: datetime
    pulse_id: str | None
    scope: str
    tags: tuple[str, ...]
    metadata: Mapping[str, Any]
    uid: str
    """Stable identity of the message, unique per persona, kept by export and import (an
    import skips a message whose uid the persona already has)."""
    playbook: str | None = None
    node: str | None = None
    line_role: LineRole = MAIN_LINE
    """The line that wrote it: only the main line's conversation is read by later pulses."""
    line_scope: LineScope = COMMITTED
    """How long it matters: only committed conversation is read by later pulses."""


@dataclass(frozen=True, slots=True)
class Thread:
    """A thread of messages: one main thread per persona, sub-threads with a parent."""

    id: str
    persona: str
    parent: str | None
    title: str
    created_at: datetime
    open: bool = False
    """A call is working in it now (:meth:`~saimemory.base.MessageStore.open_thread`); a
    thread made any other way, and one closed again, is not open."""
    closed_at: datetime | None = None
    """When it was last closed (:meth:`~saimemory.base.MessageStore.close_thread`)."""
    chronicle: str | None = None
    """What the work in it came to, as recorded when it was closed."""


@dataclass(frozen=True, slots=True)
class NewThread:
    """A sub-thread an import creates with a known id, unless the persona already has it."""

    id: str
    persona: str
    title: str
    parent: str | None
    """None: under the persona's main thread."""


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What :meth:`~saimemory.base.MessageStore.import_messages` did."""

    written: list[Message]
    skipped: int
    """Messages whose uid the persona already had (the same message): not written again."""


@dataclass(frozen=True, slots=True)
class HistoryBudget:
    """How much earlier conversation a history read may return."""

    max_messages: int = 50
    max_chars: int = 24_000

    def __post_init__(self) -> None:
        if not all(type(n) is int for n in (self.max_messages, self.max_chars)):
            raise ValueError(
                f"HistoryBudget needs whole numbers, got {self.max_messages!r} and "
                f"{self.max_chars!r}"
            )
        if self.max_messages < 0 or self.max_chars < 1:
            raise ValueError(
                f"HistoryBudget needs max_messages >= 0 and max_chars >= 1, "
                f"got {self.max_messages} and {self.max_chars}"
            )


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A full-text search result. ``rank``: higher is better (comparable within one search)."""

    message: Message
    snippet: str
    rank: float
