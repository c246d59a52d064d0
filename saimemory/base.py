"""The store contract: what the engine needs from a persona message store.

Backends implement the abstract methods; conveniences live here so that every backend
gets them for free. All methods are synchronous and thread-safe per store object.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from saimemory.calls import CallRecord
from saimemory.fold import cut_below, nothing_cut
from saimemory.locks import NullPersonaLock, PersonaLock
from saimemory.pins import Pin, ShortTermMemory
from saimemory.plans import Plan, PlanStatus
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


@dataclass(frozen=True, slots=True)
class MainContext:
    """What a model call's Main reads of its persona first (:meth:`MessageStore.main_context`).

    ``cut`` and ``unfolded`` are read only when asked (``fold``): whether the history's
    budget left out older conversation, and the newest messages it left out that the
    short-term memory does not cover yet, oldest first (:mod:`saimemory.fold`)."""

    history: list[Message]
    pins: list[Pin]
    short_term: ShortTermMemory | None
    cut: bool = False
    unfolded: list[Message] = field(default_factory=list)


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

        Earlier conversation (tagged ``conversation``, of the main line and committed, not of
        this pulse: see :data:`~saimemory.records.LINE_ROLES`), newest first until
        the budget is spent, returned oldest first; then every message of this pulse in this
        scope, in write order (plus this pulse's ``conversation`` messages of the main line
        in other scopes).
        The budget limits the earlier conversation only; a message longer than
        ``budget.max_chars`` is cut with a marker (never dropped, never emptying the history).
        """

    def main_context(
        self,
        persona: str,
        *,
        pulse_id: str | None = None,
        scope: str = ROOT_SCOPE,
        budget: HistoryBudget = DEFAULT_BUDGET,
        thread: str | None = None,
        short_term: bool = True,
        fold: int = 0,
    ) -> MainContext:
        """:meth:`history`, :meth:`pins` and (unless ``short_term`` is false, when it is
        None unread) :meth:`short_term` of the persona, as those give them: what a model
        call reads first. Each is its own read, as the calls are; a backend with round
        trips sends them together.

        With ``fold`` (and the short-term memory, on the main thread), also what a summary
        would fold: the newest ``fold`` messages of the main thread's conversation (not of
        ``pulse_id``) older than the history's earlier conversation and newer than the
        summary's last message (``unfolded``, oldest first), and whether there is any such
        older conversation, covered or not (``cut``). When the history holds no earlier
        conversation though its budget allows some, nothing was cut.
        """
        context = MainContext(
            self.history(persona, pulse_id=pulse_id, scope=scope, budget=budget, thread=thread),
            self.pins(persona), self.short_term(persona) if short_term else None)
        if fold <= 0 or not short_term or thread is not None:
            return context
        before = cut_below(context.history, pulse_id)
        if nothing_cut(before, budget.max_messages):
            return context
        summary = context.short_term
        covered = summary.through_id if summary is not None else 0
        unfolded = self.conversation_before(
            persona, before=before, after=covered, limit=fold, exclude_pulse=pulse_id)
        cut = bool(unfolded) or (summary is not None and bool(self.conversation_before(
            persona, before=before, limit=1, exclude_pulse=pulse_id)))
        return MainContext(context.history, context.pins, summary, cut, unfolded)

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
    def open_thread(
        self, persona: str, thread_id: str, *, title: str, parent: str | None = None
    ) -> Thread:
        """Open the sub-thread ``thread_id`` for work that runs in it now: created under
        ``parent`` (None: the main thread) when the persona does not have it yet, opened
        again (its close time and chronicle cleared) when it was closed. The caller picks the
        id, so work that is run again after an interruption finds its own thread. A thread
        of another persona, or a main thread, is refused with
        :class:`~saimemory.errors.NotFoundError`."""

    @abstractmethod
    def close_thread(
        self, persona: str, thread_id: str, *, chronicle: str | None = None
    ) -> Thread:
        """Close one of the persona's sub-threads, recording when and ``chronicle`` (what
        the work in it came to). Closing it again replaces both. The main thread, or a
        thread the persona does not have, is refused with
        :class:`~saimemory.errors.NotFoundError`."""

    def active_thread(self, persona: str) -> Thread:
        """The thread the persona is working in now: its newest open sub-thread (a call
        that runs in a thread of its own is under way), else its main thread."""
        opened = [thread for thread in self.threads(persona) if thread.open]
        return opened[-1] if opened else self.main_thread(persona)

    @abstractmethod
    def iter_messages(self, persona: str) -> Iterator[Message]:
        """Every message of a persona in write order (for export)."""

    @abstractmethod
    def drop_volatile(self, persona: str, pulse_id: str) -> int:
        """Delete the messages of a pulse whose scope is ``volatile`` (when the pulse ends:
        they mattered to it only); the number deleted."""

    @abstractmethod
    def delete_persona(self, persona: str) -> int:
        """Delete every message, thread, plan, pin and call record of a persona (and its
        short-term memory); the number of messages deleted."""

    # -- plans (see saimemory.plans) --------------------------------------------------------

    @abstractmethod
    def save_plan(self, plan: Plan, *, make_current: bool = False) -> Plan:
        """Store a plan in one transaction and return it as saved (``version`` one more,
        ``updated_at`` stamped); with ``make_current`` it also becomes its persona's current
        plan, in the same transaction.

        A plan with ``version`` 0 is inserted (its id must be new); any other is an update of
        the stored plan, which must still be at that version: otherwise
        :class:`~saimemory.errors.StaleVersionError` and nothing is written. A plan the store
        cannot keep (empty title, unknown status or kind, naive time ...) is refused with
        :class:`~saimemory.errors.InvalidPlanError`; updating a plan the persona does not
        have, with :class:`~saimemory.errors.NotFoundError`. The persona and ``created_at``
        of a stored plan never change.
        """

    @abstractmethod
    def get_plan(self, persona: str, plan_id: str) -> Plan:
        """The persona's plan with this id; :class:`~saimemory.errors.NotFoundError` if it
        has none."""

    @abstractmethod
    def list_plans(
        self, persona: str, *, status: PlanStatus | Sequence[PlanStatus] | None = None
    ) -> list[Plan]:
        """The persona's plans, newest first; only those of ``status`` (one or several)
        when given."""

    @abstractmethod
    def current_plan(self, persona: str) -> Plan | None:
        """The persona's current plan (at most one per persona), or None."""

    @abstractmethod
    def set_current_plan(self, persona: str, plan_id: str) -> None:
        """Make one of the persona's plans its current plan (replacing the previous one);
        :class:`~saimemory.errors.NotFoundError` if the persona has no such plan."""

    @abstractmethod
    def clear_current_plan(self, persona: str) -> str | None:
        """Leave the persona without a current plan; the id of the plan that was current."""

    # -- pinned items, short-term memory, call records (see saimemory.pins, .calls) --------

    @abstractmethod
    def pins(self, persona: str) -> list[Pin]:
        """The persona's pinned items, oldest first (at most ``MAX_PINS``)."""

    @abstractmethod
    def pin(self, persona: str, text: str) -> Pin:
        """Pin ``text`` (stripped) for the persona and return the pin; the existing pin when
        the persona has pinned that text already. A sixth pin is refused with
        :class:`~saimemory.errors.PinLimitError`, an empty or over-long text with
        :class:`~saimemory.errors.InvalidMessageError`; nothing is written then."""

    @abstractmethod
    def unpin(self, persona: str, pin_id: int) -> bool:
        """Remove one of the persona's pins; False when it has none of that id."""

    @abstractmethod
    def short_term(self, persona: str) -> ShortTermMemory | None:
        """The persona's short-term memory (rolling summary), if it has one."""

    @abstractmethod
    def save_short_term(self, persona: str, text: str, through_id: int) -> ShortTermMemory:
        """Replace the persona's short-term memory; ``through_id`` is the id of the newest
        message it covers."""

    @abstractmethod
    def conversation_before(
        self,
        persona: str,
        *,
        before: int | None,
        after: int = 0,
        limit: int = 50,
        exclude_pulse: str | None = None,
    ) -> list[Message]:
        """The newest ``limit`` conversation messages (tag ``conversation``) of the persona's
        main thread with ``after < id < before`` (no upper bound when ``before`` is None),
        leaving out the messages of ``exclude_pulse``; oldest first. What a context's
        history budget cut is read with this."""

    @abstractmethod
    def record_calls(self, records: Sequence[CallRecord]) -> None:
        """Store call records in one transaction (all or none); each is checked first
        (:class:`~saimemory.errors.InvalidMessageError`, nothing written)."""

    @abstractmethod
    def call_records(
        self,
        persona: str | None = None,
        *,
        since: datetime | None = None,
        pulse_id: str | None = None,
    ) -> list[CallRecord]:
        """Stored call records, oldest first: of one persona (every persona when None),
        received at ``since`` or later, of one pulse when ``pulse_id`` is given."""

    def persona_lock(self, persona: str) -> PersonaLock:
        """A lock that keeps other processes' pulses of ``persona`` out while held (see
        :mod:`saimemory.locks`); not taken yet. This default is always free: a backend
        that can lock across processes overrides it."""
        return NullPersonaLock()

    @abstractmethod
    def optimize(self) -> None:
        """Maintenance: merge the pieces the search indexes gathered over many appends (and,
        on PostgreSQL, refresh the planner's statistics), so searches read less. Nothing a reader
        sees changes. It holds the store's write lock while it runs (seconds on a store of a
        million messages): run it when the store is quiet, e.g. nightly."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""
