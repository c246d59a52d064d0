"""Whether a playbook run can pause for a person: decided before a call, so that a callee
that cannot is run without a nested LangGraph run, and before each node of a pulse's own
playbook run that way, so that its graph takes over only where a node may pause
(:mod:`sea.engine.direct`).

A run pauses only where a node asks a person (:mod:`sea.engine.approval`): a tool the
pulse's policy asks about (``Pulse.approval_tools``), a gated tool's result
(``Pulse.gates``), an ``exec`` of a playbook outside its allow-list. Each node kind says
where its nodes can ask (:class:`Waits`, :meth:`sea.engine.registry.NodeKind.waits`); a kind
that says nothing may always ask, so a host's own kinds are never run in a way they did not
declare safe.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from langgraph.types import Command

from sea.engine.state import PlaybookState


@dataclass(frozen=True, slots=True)
class Waits:
    """Where a node (or a whole playbook) can pause for a person.

    Attributes:
        always: It may pause whatever the pulse's policy.
        tools: It calls these tools (it pauses when one is asked about or gated).
        any_tool: It calls a tool chosen while it runs.
        callees: It calls these playbooks (it pauses when one of them can).
        router_callees: It calls a playbook the pulse offers a router, chosen while it
            runs (it pauses when one of them can).
        unlisted: It asks before calling a playbook outside its list when the policy says
            so (``Limits.unlisted_exec = "ask"``).
        spelled: It calls a playbook whose name fits one of these patterns, names its own
            playbook spells (:mod:`sea.lang.exec_targets`; it pauses when one can).
    """

    always: bool = False
    tools: frozenset[str] = frozenset()
    any_tool: bool = False
    callees: tuple[str, ...] = ()
    router_callees: bool = False
    unlisted: bool = False
    spelled: tuple[str, ...] = ()

    @property
    def calls_playbooks(self) -> bool:
        """Whether it says its node may call a playbook (named, a router's, spelled, or
        outside an ``exec`` node's list)."""
        return bool(self.callees or self.router_callees or self.spelled or self.unlisted)

    def __or__(self, other: Waits) -> Waits:
        return Waits(
            self.always or other.always,
            self.tools | other.tools,
            self.any_tool or other.any_tool,
            tuple(dict.fromkeys((*self.callees, *other.callees))),
            self.router_callees or other.router_callees,
            self.unlisted or other.unlisted,
            tuple(dict.fromkeys((*self.spelled, *other.spelled))),
        )


@dataclass(frozen=True, slots=True)
class Handover:
    """A run without its graph stopped before a node that may pause for a person
    (:meth:`sea.engine.direct.DirectGraph.run_until`): the state the node would run with,
    the node, the node that ran before it (None: none did), how many nodes ran, and whether
    that node routes by a ``Command`` in the graph (a pure node, :mod:`sea.engine.compiler`)."""

    state: PlaybookState
    node: str
    last: str | None
    ran: int
    last_routes: bool = False

    def as_ran(self) -> PlaybookState | Command[str]:
        """What ``last`` gives its graph, for the graph's state to be set as if it had run
        there (``update_state(..., as_node=last)``) and go on at ``node``: the state, or,
        from a node that routes by a ``Command``, the state and where to go."""
        if self.last_routes:
            return Command(goto=self.node, update=self.state)
        return self.state


NEVER = Waits()
"""A node that never asks a person."""
ALWAYS = Waits(always=True)
"""A node that may ask a person whatever the policy (or that says nothing of it)."""


@dataclass(frozen=True, slots=True)
class Policy:
    """What a pulse asks a person about, and how it finds what a run may call.

    Attributes:
        asked: The tools whose calls (or results) a person is asked about.
        unlisted_asks: A call outside an ``exec`` node's list is asked about.
        callee: A playbook's waits, by name.
        router_callable: The playbooks the pulse offers a router.
        names: Every playbook of the library (for :attr:`Waits.spelled`).
    """

    asked: Collection[str]
    unlisted_asks: bool
    callee: Callable[[str], Waits]
    router_callable: Callable[[], Iterable[str]]
    names: Callable[[], Iterable[str]] = tuple


def may_wait(waits: Waits, policy: Policy, seen: tuple[str, ...] = ()) -> bool:
    """Whether a run with these ``waits`` can pause under ``policy``. A recursive call
    (refused when it runs) is not followed again."""
    if waits.always or (waits.unlisted and policy.unlisted_asks):
        return True
    if (waits.any_tool and policy.asked) or any(tool in policy.asked for tool in waits.tools):
        return True
    callees: Iterable[str] = waits.callees
    if waits.router_callees:
        callees = (*callees, *policy.router_callable())
    if waits.spelled:
        patterns = [re.compile(pattern) for pattern in waits.spelled]
        callees = (*callees, *(n for n in policy.names() if any(p.fullmatch(n) for p in patterns)))
    for name in callees:
        if name in seen:
            continue
        if may_wait(policy.callee(name), policy, (*seen, name)):
            return True
    return False
