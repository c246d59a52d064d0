"""The node types that write a message: ``memorize`` (to memory), ``speak`` (as the persona,
stored and sent), ``say`` (sent, not stored) and ``think`` (an internal thought)."""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from collections.abc import Iterator, Mapping
from typing import ClassVar, Literal

from pydantic import Field

from sea.lang.node import NodeModel, Read, key_read, template_reads
from sea.lang.node_options import LINE_ROLE_DOC, SCOPE_DOC, LineRole, LineScope, Role
from sea.lang.uses import TagUse

_TEXT = "the text template of this node is `action`"


class MemorizeNode(NodeModel):
    """Write a message to the persona's memory."""

    type: Literal["memorize"] = Field(description="Node type: write a message to memory.")
    action: str = Field(
        default="{last}",
        description="Template of the text to store. Objects and lists render as JSON.",
    )
    role: Role = Field(
        default="assistant",
        description="Role of the stored message. Results for the speaker: `user` with text "
        "wrapped in `<system>…</system>`.",
    )
    tags: list[str] | None = Field(default=None, description="Tags stored on the message.")
    metadata_key: str | None = Field(
        default=None, description="State key of an object merged into the message's metadata."
    )
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")
    line_role: LineRole | None = Field(default=None, description=LINE_ROLE_DOC)
    scope: LineScope | None = Field(default=None, description=SCOPE_DOC)

    mermaid_shape: ClassVar[tuple[str, str]] = ("[(", ")]")
    known_mistakes: ClassVar[Mapping[str, str]] = {"content": _TEXT, "text": _TEXT}

    def field_reads(self, base: str) -> Iterator[Read]:
        """The text template's variables and the metadata key."""
        if self.action:
            yield from template_reads(self.action, f"{base}/action", self.id, prompt=True)
        yield from key_read(self.metadata_key, f"{base}/metadata_key", self.id)

    def tags_written(self) -> Iterator[TagUse]:
        """``tags``."""
        for position, tag in enumerate(self.tags or []):
            yield TagUse(tag, ("tags", position))


class _UtteranceNode(NodeModel):
    action: str | None = Field(
        default=None,
        description="Template of the text; absent: the value of `last`.",
    )

    mermaid_shape: ClassVar[tuple[str, str]] = (">", "]")
    known_mistakes: ClassVar[Mapping[str, str]] = {"text": _TEXT}

    def field_reads(self, base: str) -> Iterator[Read]:
        """The text template's variables."""
        if self.action:
            yield from template_reads(self.action, f"{base}/action", self.id)


class SpeakNode(_UtteranceNode):
    """Say something as the persona: stored as conversation and sent to the host."""

    type: Literal["speak"] = Field(description="Node type: the persona speaks (stored, emitted).")
    metadata_key: str | None = Field(
        default=None,
        description="State key of an object stored in the message's metadata and sent as "
        "the event's metadata (e.g. media attachments).",
    )
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")

    def field_reads(self, base: str) -> Iterator[Read]:
        """The text template's variables and the metadata key."""
        yield from super().field_reads(base)
        yield from key_read(self.metadata_key, f"{base}/metadata_key", self.id)


class SayNode(_UtteranceNode):
    """Send text to the host without storing it."""

    type: Literal["say"] = Field(description="Node type: send text to the host (not stored).")
    metadata_key: str | None = Field(
        default=None, description="State key of an object sent as the event's metadata."
    )

    def field_reads(self, base: str) -> Iterator[Read]:
        """The text template's variables and the metadata key."""
        yield from super().field_reads(base)
        yield from key_read(self.metadata_key, f"{base}/metadata_key", self.id)


class ThinkNode(_UtteranceNode):
    """Store an internal thought (tag `internal`)."""

    type: Literal["think"] = Field(description="Node type: store an internal thought.")
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")
