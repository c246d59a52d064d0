"""What a persona keeps in view beside its conversation (seed 003, the "Main" context):
pinned items and short-term memory.

* A :class:`Pin` is one fact, goal or preference the persona keeps in every conversation
  context; a persona has at most :data:`MAX_PINS` of them (the seed's "fixed five items").
  Pinning the same text twice keeps one pin.
* :class:`ShortTermMemory` is a rolling summary of the conversation older than what a
  context's history budget holds; ``through_id`` is the id of the newest message it covers,
  so the engine knows which older messages are not in it yet. One per persona.

The store keeps these records and checks their shape; when they are used and how the
summary is written is the engine's business (``sea.llm``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

MAX_PINS = 5
"""The most items a persona may keep pinned."""
MAX_PIN_CHARS = 500
"""The longest pinned item, in characters."""
MAX_SUMMARY_CHARS = 8_000
"""The longest short-term memory, in characters."""


@dataclass(frozen=True, slots=True)
class Pin:
    """One pinned item of a persona (oldest first in lists)."""

    id: int
    persona: str
    text: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ShortTermMemory:
    """A persona's rolling summary of its older conversation.

    Attributes:
        persona: Whose summary it is.
        text: The summary.
        through_id: The id of the newest message the summary covers.
        updated_at: When it was last written.
    """

    persona: str
    text: str
    through_id: int
    updated_at: datetime
