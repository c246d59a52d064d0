"""What every node of a pulse can reach: services, the pulse, and its own playbook frame.

Compiled graphs capture none of this; it travels as the LangGraph run context
(:class:`Frame`), one per playbook invocation, so one compiled graph serves every pulse.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from langgraph.graph.state import CompiledStateGraph

from saimemory.base import MessageStore
from saimemory.errors import MemoryStoreError
from saimemory.records import ENGINE_MEMO, ROOT_SCOPE, NewMessage, Persona, Role
from sea.engine.events import Event, MemoryWritten
from sea.engine.limits import Limits
from sea.engine.state import PlaybookState
from sea.engine.tools.box import ToolBox
from sea.errors import MemoryWriteFailed
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

    def router_callable(self) -> list[Playbook]:
        """Playbooks a router (and ``exec``) may choose."""
        ...


class Compiles(Protocol):
    """The part of :class:`sea.engine.compiler.Compiler` a pulse uses."""

    def compile(self, playbook: Playbook, content_hash: str) -> Graph:
        """The compiled graph of ``playbook``."""
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
    approval_tools: frozenset[str] = frozenset()
    """Tools that run only after a person approves: the runtime's policy, and for a resumed
    pulse also the policy it started under (an answer is never skipped by a runtime that
    would not have asked)."""
    pending: tuple[dict[str, Any], ...] = ()
    """For a resumed pulse: the approval requests it was waiting on (a node that asked
    with what it had decided, e.g. a plan, finds it here instead of deciding again)."""

    def router_callable(self) -> list[Playbook]:
        """The playbooks a router (and an ``exec`` without an allow-list) may choose in
        this pulse: the router-callable ones whose tools are all available."""
        return reachable(self.services.library.router_callable(), self.toolbox)

    def pending_request(self, playbook: str, node: str) -> dict[str, Any] | None:
        """The request this pulse was waiting on at ``playbook.node``, if any."""
        for request in self.pending:
            if request.get("playbook") == playbook and request.get("node") == node:
                return request
        return None

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
        self.pulse.emit(event)

    def child(self, playbook: Playbook, *, scope: str | None = None) -> Frame:
        """The frame of a playbook called from this one."""
        return replace(
            self,
            playbook=playbook,
            depth=self.depth + 1,
            scope=self.scope if scope is None else scope,
            stack=(*self.stack, playbook.name),
        )

    async def remember(
        self,
        node: str,
        role: Role,
        content: str,
        tags: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Write a message of this pulse to memory, with provenance, and report it.

        A user or system message is marked as the engine's own (``ENGINE_MEMO``): callers
        write only engine text, with anything substituted into it neutralized
        (:mod:`sea.lang.trust`). An assistant message (a model's answer) never is.
        """
        marked = dict(metadata or {})
        marked.pop(ENGINE_MEMO, None)
        if role != "assistant":  # the engine's own words; a model's answer never is
            marked[ENGINE_MEMO] = True
        message = NewMessage(
            persona=self.pulse.persona.id,
            role=role,
            content=content,
            tags=tuple(dict.fromkeys(tags)),
            metadata=marked,
            pulse_id=self.pulse.pulse_id,
            scope=self.scope,
            playbook=self.name,
            node=node,
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
            )
        )


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
