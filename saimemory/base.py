"""The store contract: what the engine needs from a persona message store.

Backends implement the abstract methods; conveniences live here so that every backend
gets them for free. All methods are synchronous and thread-safe per store object.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from datetime import datetime

from saimemory.records import (
    ROOT_SCOPE,
    HistoryBudget,
    ImportResult,
    Message,
    NewMessage,
    NewThread,
    SearchHit,
    Thread,
)
from saimemory.search_terms import MatchMode

DEFAULT_BUDGET = HistoryBudget()


class MessageStore(ABC):
    """A persona message store (SAIMemory)."""

    @abstractmethod
    def append(self, message: NewMessage) -> Message:
        """Store one message in its own transaction and return it with its id and time."""

    def append_many(self, messages: Sequence[NewMessage]) -> list[Message]:
        """Store several messages in order. Backends make this one transaction (all or none);
        this default appends one by one."""
        return [self.append(message) for message in messages]

    @abstractmethod
    def import_messages(
        self, messages: Sequence[NewMessage], threads: Sequence[NewThread] = ()
    ) -> ImportResult:
        """Append, in one transaction, each message whose ``uid`` its persona does not have.

        A message whose uid is already stored with the same role, content and time is
        skipped (so importing one export twice writes it once); a different message under a
        known uid is refused with :class:`~saimemory.errors.InvalidMessageError` and nothing
        is written. ``threads`` describes sub-threads the messages name, created (parents
        first) when a written message needs one the persona lacks.
        """

    @abstractmethod
    def history(
        self,
        persona: str,
        *,
        pulse_id: str | None = None,
        scope: str = ROOT_SCOPE,
        budget: HistoryBudget = DEFAULT_BUDGET,
        thread: str | None = None,
    ) -> list[Message]:
        """The pulse rule: what an LLM node of ``pulse_id`` in ``scope`` sees, oldest first.

        Earlier conversation (tagged ``conversation``, not of this pulse), newest first until
        the budget is spent, returned oldest first; then every message of this pulse in this
        scope, in write order (plus this pulse's ``conversation`` messages of other scopes).
        The budget limits the earlier conversation only; a message longer than
        ``budget.max_chars`` is cut with a marker (never dropped, never emptying the history).
        """

    @abstractmethod
    def pulse_messages(self, persona: str, pulse_id: str) -> list[Message]:
        """Every message written by one pulse, in write order, all scopes."""

    @abstractmethod
    def recent(self, persona: str, *, limit: int = 20, thread: str | None = None) -> list[Message]:
        """The newest ``limit`` messages of a persona (any tag), oldest first."""

    @abstractmethod
    def search(
        self,
        persona: str,
        query: str,
        *,
        tags: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 20,
        match: MatchMode = "all",
    ) -> list[SearchHit]:
        """Full-text search (English and Japanese) with tag and time filters, best first.

        ``match="all"`` (the default) requires every word, as written, and ranks hits by
        how often the words occur and in how short a message (:mod:`saimemory.all_match`);
        ``match="any"`` suits natural-language questions: punctuation around words is
        ignored, one word suffices, messages with rare words rank first and English
        function words count least (:mod:`saimemory.any_match`). Equal ranks go to the
        newest message.
        """

    @abstractmethod
    def main_thread(self, persona: str) -> Thread:
        """The persona's main thread (created on first use)."""

    @abstractmethod
    def create_thread(self, persona: str, *, title: str, parent: str | None = None) -> Thread:
        """A new sub-thread (``parent`` defaults to the main thread)."""

    @abstractmethod
    def threads(self, persona: str) -> list[Thread]:
        """All threads of a persona."""

    @abstractmethod
    def iter_messages(self, persona: str) -> Iterator[Message]:
        """Every message of a persona in write order (for export)."""

    @abstractmethod
    def delete_persona(self, persona: str) -> int:
        """Delete every message and thread of a persona; the number of messages deleted."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""
