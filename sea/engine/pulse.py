"""What every node of a pulse can reach: services, the pulse, and its own playbook frame.

Compiled graphs capture none of this; it travels as the LangGraph run context
(:class:`Frame`), one per playbook invocation, so one compiled graph serves every pulse.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from collections.abc import (
    Awaitable,
    Callable,
    Container,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from langgraph.graph.state import CompiledStateGraph

from saimemory.base import MessageStore
from saimemory.errors import MemoryStoreError
from saimemory.records import (
    COMMITTED,
    ENGINE_MEMO,
    MAIN_LINE,
    ROOT_SCOPE,
    LineRole,
    LineScope,
    NewMessage,
    Persona,
    Role,
)
from sea.engine.events import Event, MemoryWritten
from sea.engine.gates import ToolGate
from sea.engine.journal import Journal, Journals
from sea.engine.limits import Limits
from sea.engine.state import PlaybookState
from sea.engine.tools.box import ToolBox
from sea.engine.waits import Handover, Waits
from sea.errors import MemoryWriteFailed, SizeLimitExceeded
from sea.jsontypes import json_text
from sea.lang.models import Playbook
from sea.llm.call import LLMCaller


class Library(Protocol):
    """The part of ``sea.lang.library.PlaybookLibrary`` the engine uses."""

    def get(self, name: str) -> Playbook:
        """The validated playbook of this name."""
        ...

    def content_hash(self, name: str) -> str:
        """The hash of the playbook's source."""
        ...

    def names(self) -> list[str]:
        """Every playbook's name."""
        ...

    def router_callable(self) -> list[Playbook]:
        """Playbooks a router (and ``exec``) may choose."""
        ...


class DirectRun(Protocol):
    """A playbook's nodes run one after another without Pregel (:mod:`sea.engine.direct`)."""

    async def run(
        self, first: PlaybookState, frame: Frame, recursion_limit: int,
        journal: Journal | None = None,
    ) -> PlaybookState:
        """Run from the start node to the end (keeping the runs of ``journal``'s nodes
        there); the final state."""
        ...

    async def run_until(
        self, first: PlaybookState, frame: Frame, recursion_limit: int,
        pauses: Callable[[Waits], bool] | None,
    ) -> PlaybookState | Handover:
        """:meth:`run`, stopped before the first node ``pauses`` says may pause."""
        ...


class CompiledPlaybook(Protocol):
    """A compiled playbook as a call uses it (:class:`sea.engine.compiler.Compiled`)."""

    @property
    def graph(self) -> Graph:
        """Its LangGraph graph."""
        ...

    @property
    def direct(self) -> DirectRun:
        """Its nodes, for a run without Pregel."""
        ...

    @property
    def waits(self) -> Waits:
        """Where its nodes can pause for a person."""
        ...

    def one_step(self, replayable: Callable[[str], bool]) -> bool:
        """Every run of it is as one graph step would run it (nodes that may run again,
        then one node), given which tools may be called again."""
        ...

    def kept(self, replayable: Callable[[str], bool]) -> frozenset[str] | None:
        """The nodes whose runs a run of it in its caller's step keeps in a journal, given
        which tools may be called again (None: it runs in a graph of its own)."""
        ...


class Compiles(Protocol):
    """The part of :class:`sea.engine.compiler.Compiler` a pulse uses."""

    def compile(self, playbook: Playbook, content_hash: str) -> Graph:
        """The compiled graph of ``playbook``."""
        ...

    def compiled(self, playbook: Playbook, content_hash: str) -> CompiledPlaybook:
        """``playbook`` compiled: its graph, its nodes for a direct run, its waits."""
        ...


@dataclass(frozen=True, slots=True)
class Services:
    """Long-lived dependencies shared by every pulse of a runtime."""

    store: MessageStore
    library: Library
    compiler: Compiles
    limits: Limits


@dataclass(slots=True)
class Pulse:
    """One pulse: who thinks, its id, and where its events go."""

    services: Services
    persona: Persona
    pulse_id: str
    sink: Callable[[Event], None]
    caller: LLMCaller
    """The call path; its records go to this pulse's events."""
    toolbox: ToolBox
    """The host's tools and the built-in ones, bound to this persona."""
    offer: RouterOffer
    """The playbooks a router may choose in this pulse (:meth:`router_callable`); the
    ``list_available_playbooks`` tool of the toolbox lists the same."""
    approval_tools: frozenset[str] = frozenset()
    """Tools that run only after a person approves: the runtime's policy, and for a resumed
    pulse also the policy it started under (an answer is never skipped by a runtime that
    would not have asked)."""
    pending: tuple[dict[str, Any], ...] = ()
    """For a resumed pulse: the approval requests it was waiting on (a node that asked
    with what it had decided, e.g. a plan, finds it here instead of deciding again)."""
    recoverable: bool = False
    """Its writes carry uids derived from the pulse id and the node run
    (:func:`write_uid`), so that a node run again after a crash writes nothing twice."""
    stored_uids: frozenset[str] = frozenset()
    """For a recoverable pulse driven again: the uids it had already stored."""
    gates: Mapping[str, ToolGate] = field(default_factory=dict)
    """Tool name → the gate that settles its result with a person's answer
    (:mod:`sea.engine.gates`)."""
    direct_calls: bool = False
    """A called playbook that cannot pause for a person is run without a nested LangGraph
    run (:mod:`sea.engine.direct`): set for a pulse whose checkpoints serve only a wait
    (not recoverable, none kept), when it starts."""
    journals: Journals | None = None
    """For a recoverable pulse: where a called playbook that runs in its caller's step
    keeps its node runs (:mod:`sea.engine.journal`)."""

    safe_point: Callable[[], Awaitable[bool]] | None = None
    """Awaited before each node runs, where the pulse's state is whole: the host may make
    the pulse yield its persona's turn there to a pulse of higher priority
    (:meth:`sea.host.turns.Turn.safe_point`)."""

    called: dict[str, tuple[Playbook, CompiledPlaybook]] = field(
        default_factory=dict, init=False, repr=False)
    """:meth:`playbook`'s answers so far."""
    wrote_volatile: bool = field(default=False, init=False, repr=False)
    """A volatile message (``line_scope`` ``volatile``) may have been written: set before
    each such write, so the host deletes them when the pulse ends (and need not ask the
    store otherwise)."""

    def playbook(self, name: str) -> tuple[Playbook, CompiledPlaybook]:
        """The playbook of this name and its compiled form, looked up once per pulse: a
        pulse calls each playbook as it was when the pulse first called it.

        Raises:
            PlaybookNotFound: No such playbook.
            PlaybookError: Its file has errors.
        """
        found = self.called.get(name)
        if found is None:
            library = self.services.library
            playbook = library.get(name)
            compiled = self.services.compiler.compiled(playbook, library.content_hash(name))
            found = self.called[name] = (playbook, compiled)
        return found

    def router_callable(self) -> list[Playbook]:
        """The playbooks a router (and an ``exec`` without an allow-list) may choose in
        this pulse (:class:`RouterOffer`)."""
        return self.offer.router_callable()

    def pending_request(self, playbook: str, node: str) -> dict[str, Any] | None:
        """The request this pulse was waiting on at ``playbook.node``, if any."""
        for request in self.pending:
            if request.get("playbook") == playbook and request.get("node") == node:
                return request
        return None

    def take_pending(self, playbook: str, node: str) -> dict[str, Any] | None:
        """The request this pulse was waiting on at ``playbook.node``, removed from
        :attr:`pending` (a node that runs again later in the pulse asks afresh)."""
        found = self.pending_request(playbook, node)
        if found is not None:
            self.pending = tuple(request for request in self.pending if request is not found)
        return found

    def emit(self, event: Event) -> None:
        """Send an event to the host."""
        self.sink(event)


@dataclass(frozen=True, slots=True)
class Frame:
    """One playbook invocation within a pulse (the LangGraph run context)."""

    pulse: Pulse
    playbook: Playbook
    depth: int = 0
    scope: str = ROOT_SCOPE
    stack: tuple[str, ...] = field(default_factory=tuple)
    """Names of the playbooks on the call stack, outermost first (this one last)."""
    step: int = 0
    """The pulse's step count when the running node started: one number per node run of
    the pulse, the same when a node is run again from the same checkpoint."""
    writes: Iterator[int] = field(default_factory=itertools.count, compare=False, repr=False)
    """Numbers the running node's memory writes."""
    threads: tuple[str, ...] = ()
    """The sub-threads of memory the enclosing subagent calls opened, outermost first
    (:mod:`sea.engine.subagent`); empty: the persona's main thread."""
    direct: bool = False
    """This playbook runs without a LangGraph run of its own (:mod:`sea.engine.direct`),
    because it was found unable to pause for a person: it must not ask one."""
    sub_line: bool = False
    """This playbook runs on a sub line (a ``subplay`` with ``"line": "sub"``): its model
    calls use the lightweight model and its messages are of the sub line."""

    @property
    def thread(self) -> str | None:
        """The thread this playbook reads and writes (None: the persona's main thread)."""
        return self.threads[-1] if self.threads else None

    def at_node(self, step: int) -> Frame:
        """This frame for one node run that starts at ``step``."""
        # every field named (dataclasses.replace costs twice as much, and runs each step)
        return Frame(self.pulse, self.playbook, self.depth, self.scope, self.stack, step,
                     itertools.count(), self.threads, self.direct, self.sub_line)

    @property
    def services(self) -> Services:
        """The runtime's services."""
        return self.pulse.services

    @property
    def name(self) -> str:
        """This playbook's name."""
        return self.playbook.name

    def emit(self, event: Event) -> None:
        """Send an event to the host."""
        self.pulse.sink(event)

    def child(
        self, playbook: Playbook, *, scope: str | None = None, sub_line: bool = False
    ) -> Frame:
        """The frame of a playbook called from this one (on a sub line when this one is, or
        when ``sub_line``)."""
        return replace(
            self,
            playbook=playbook,
            depth=self.depth + 1,
            scope=self.scope if scope is None else scope,
            stack=(*self.stack, playbook.name),
            sub_line=self.sub_line or sub_line,
        )

    async def remember(
        self,
        node: str,
        role: Role,
        content: str,
        tags: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
        line: Line = (MAIN_LINE, COMMITTED),
    ) -> None:
        """Write a message of this pulse to memory, with provenance, and report it.

        ``line``: the message's line and scope (a node's ``line_role`` and ``scope``).

        A user or system message is marked as the engine's own (``ENGINE_MEMO``): callers
        write only engine text, with anything substituted into it neutralized
        (:mod:`sea.lang.trust`). An assistant message (a model's answer) never is.

        Raises:
            SizeLimitExceeded: ``content`` is longer than ``Limits.max_message_chars``
                (nothing is written).
            MemoryWriteFailed: The store refused the message.
        """
        limit = self.services.limits.max_message_chars
        if len(content) > limit:
            raise SizeLimitExceeded(
                f"the message to memorize has {len(content):,} characters, more than "
                f"{limit:,} (Limits.max_message_chars); nothing was written",
                limit="max_message_chars",
                playbook=self.name,
                node=node,
            )
        marked = dict(metadata or {})
        marked.pop(ENGINE_MEMO, None)
        if role != "assistant":  # the engine's own words; a model's answer never is
            marked[ENGINE_MEMO] = True
        uid = None
        if self.pulse.recoverable:
            uid = write_uid(self.pulse.pulse_id, f"{self.step}.{next(self.writes)}")
            if uid in self.pulse.stored_uids:
                return  # written before the pulse was interrupted: not again
        if self.sub_line and line[0] == MAIN_LINE:  # a sub line writes on its own line
            line = ("sub_line", line[1])
        if line[1] == "volatile":
            self.pulse.wrote_volatile = True
        message = NewMessage(
            persona=self.pulse.persona.id,
            role=role,
            content=content,
            tags=tuple(dict.fromkeys(tags)),
            metadata=marked,
            pulse_id=self.pulse.pulse_id,
            scope=self.scope,
            thread=self.thread,
            playbook=self.name,
            node=node,
            uid=uid,
            line_role=line[0],
            line_scope=line[1],
        )
        try:
            stored = await asyncio.to_thread(self.services.store.append, message)
        except MemoryStoreError as exc:
            raise MemoryWriteFailed(
                f"memory refused the message ({exc.code}): {exc.message}",
                playbook=self.name,
                node=node,
            ) from exc
        self.emit(
            MemoryWritten(
                pulse_id=self.pulse.pulse_id,
                playbook=self.name,
                node=node,
                message_id=stored.id,
                role=stored.role,
                content=stored.content,
                tags=stored.tags,
                thread=self.thread,
            )
        )


Line = tuple[LineRole, LineScope]
"""A message's line and scope (:data:`saimemory.records.LINE_ROLES`, ``LINE_SCOPES``)."""


def line_of(line_role: LineRole | None, scope: LineScope | None) -> Line:
    """The line and scope a node's ``line_role`` and ``scope`` give (main-line and committed
    where not said)."""
    return (line_role or MAIN_LINE, scope or COMMITTED)


def write_uid(pulse_id: str, what: str) -> str:
    """The uid of a recoverable pulse's write: ``<pulse id>.<what>`` (hashed when long),
    the same each time the write is made again."""
    uid = f"{pulse_id}.{what}"
    if len(uid) > 120:
        uid = hashlib.sha256(uid.encode("utf-8")).hexdigest()
    return uid


class RouterOffer:
    """The playbooks a router (and an ``exec`` without an allow-list) may choose in one
    pulse: the library's router-callable ones whose tools are all among the pulse's tools.

    Worked out once, when first asked, so that the pulse's router, its ``exec`` nodes, its
    ``list_available_playbooks`` calls and the question whether it can pause all see the
    same playbooks, even when a playbook file changes while the pulse runs.
    """

    def __init__(self, library: Library, tools: Container[str]) -> None:
        self._library = library
        self._tools = tools
        self._offered: tuple[Playbook, ...] | None = None

    def router_callable(self) -> list[Playbook]:
        """The playbooks offered, in the library's order."""
        if self._offered is None:
            self._offered = tuple(reachable(self._library.router_callable(), self._tools))
        return list(self._offered)


def reachable(playbooks: Iterable[Playbook], tools: Container[str]) -> list[Playbook]:
    """The ``playbooks`` whose tools are all among ``tools`` (a playbook that needs a tool
    the host did not give, such as a workspace tool, is not offered)."""
    return [p for p in playbooks if all(name in tools for name in p.tools_needed())]


Graph = CompiledStateGraph[PlaybookState, Frame, PlaybookState, PlaybookState]
"""A compiled playbook: LangGraph state graph run with a :class:`Frame` as its context."""


def as_text(value: Any) -> str:
    """Text of a value for memory and speech: strings as they are, structures as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json_text(value)
