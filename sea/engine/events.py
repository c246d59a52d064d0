"""Typed events a pulse emits to its host (``Runtime.astream_pulse`` yields them).

Every event is a frozen dataclass with a ``kind`` string and ``to_json()``. Texts and values
are plain JSON data so a host can forward them as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from saimemory.calls import CallRecord
from saimemory.frozen import fast_init
from sea.llm.records import LLMCallRecord


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "to_json"):
        return value.to_json()
    return value


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all events: the pulse it belongs to."""

    kind: ClassVar[str] = "event"
    pulse_id: str

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON object with its ``kind``."""
        data = {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return {"kind": self.kind, **data}


@dataclass(frozen=True, slots=True)
class PulseStarted(Event):
    """A pulse began: who, which playbook, what input."""

    kind: ClassVar[str] = "pulse_start"
    persona_id: str
    playbook: str
    input: str


@dataclass(frozen=True, slots=True)
class PulseEnded(Event):
    """A pulse ended with ``status`` ok, error, cancelled or waiting."""

    kind: ClassVar[str] = "pulse_end"
    status: str
    duration_s: float
    error: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class NodeEvent(Event):
    """Base of the events that happen at one node of a playbook."""

    playbook: str
    node: str


@dataclass(frozen=True, slots=True)
class _NodeRun(NodeEvent):
    """Base of a node's start and end: its type and how deep its playbook is called."""

    node_type: str
    depth: int


@dataclass(frozen=True, slots=True)
class NodeStarted(_NodeRun):
    """A node began (``depth`` 0 is the top-level playbook)."""

    kind: ClassVar[str] = "node_start"


@dataclass(frozen=True, slots=True)
class NodeEnded(_NodeRun):
    """A node ended: ``outcome`` ok, error (routed to error_next) or failed (pulse fails)."""

    kind: ClassVar[str] = "node_end"
    duration_s: float
    outcome: str


@dataclass(frozen=True, slots=True)
class TokenChunk(NodeEvent):
    """A piece of a speaking node's reply as the model streams it."""

    kind: ClassVar[str] = "token"
    text: str


@dataclass(frozen=True, slots=True)
class Spoken(NodeEvent):
    """The persona said something to the host (``stored``: kept in memory as conversation)."""

    kind: ClassVar[str] = "spoken"
    text: str
    stored: bool
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MemoryWritten(Event):
    """A message was written to the persona's memory."""

    kind: ClassVar[str] = "memory_write"
    playbook: str | None
    node: str | None
    message_id: int
    role: str
    content: str
    tags: tuple[str, ...]
    thread: str | None = None
    """The thread it went to (None: the persona's main thread)."""


@dataclass(frozen=True, slots=True)
class SubagentStarted(NodeEvent):
    """A subagent call began: ``callee`` runs in the sub-thread ``thread`` (``depth`` 1 is
    a subagent called from the main thread)."""

    kind: ClassVar[str] = "subagent_start"
    callee: str
    thread: str
    depth: int


@dataclass(frozen=True, slots=True)
class SubagentEnded(NodeEvent):
    """A subagent call ended (``status`` ok, error or cancelled); its thread is closed.

    ``chronicle`` is what came back as ``_subagent_chronicle``: the light model's summary
    (``source`` ``model``) or a bounded transcript of the thread (``transcript``); ``error``
    says why a summary was asked for and not made."""

    kind: ClassVar[str] = "subagent_end"
    callee: str
    thread: str
    status: str
    chronicle: str
    source: str
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCalled(NodeEvent):
    """A tool ran (``ok``) or failed (``error``)."""

    kind: ClassVar[str] = "tool_call"
    tool: str
    args: dict[str, Any]
    ok: bool
    result: Any = None
    error: dict[str, Any] | None = None
    duration_s: float = 0.0
    action_id: str | None = None
    """The action of an ``actions`` node this call carries out (None for other nodes)."""

    def call_row(self, persona: str) -> CallRecord:
        """The call's stored row (``sea stats``): its tool, outcome, time and error message.

        Args:
            persona: The persona whose pulse made the call.

        Returns:
            The row SAIMemory keeps in ``call_records``.
        """
        error = None
        if self.error is not None:
            error = str(self.error.get("message") or self.error.get("code") or "failed")
        return CallRecord(
            persona=persona,
            kind="tool",
            name=self.tool,
            outcome="ok" if self.ok else "error",
            pulse_id=self.pulse_id,
            playbook=self.playbook or None,
            node=self.node or None,
            latency_s=max(0.0, self.duration_s),
            error=error,
        )


@dataclass(frozen=True, slots=True)
class ActionsPlanned(NodeEvent):
    """An ``actions`` node's model planned its actions (before any of them runs).

    ``catalogue`` is what the model was offered: tool name → ``{description, parameters}``.
    """

    kind: ClassVar[str] = "actions_planned"
    actions: list[dict[str, Any]]
    reason: str
    catalogue: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ActionStarted(NodeEvent):
    """One planned action begins (``parameters`` as the model planned them)."""

    kind: ClassVar[str] = "action_start"
    action_id: str
    tool: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RefResolved(NodeEvent):
    """A ``ref:`` parameter received an earlier action's result, normalized by ``rule``
    from ``from_type`` to ``to_type`` (``detail``: e.g. the length before a cut)."""

    kind: ClassVar[str] = "ref_resolved"
    action_id: str
    parameter: str
    ref: str
    rule: str
    from_type: str
    to_type: str
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class ActionEnded(NodeEvent):
    """One planned action ended: ``status`` ok, failed (``error``) or skipped (``error``
    says why: an earlier action failed)."""

    kind: ClassVar[str] = "action_end"
    action_id: str
    tool: str
    status: str
    error: dict[str, Any] | None = None
    duration_s: float = 0.0


@dataclass(frozen=True, slots=True)
class PlanChanged(Event):
    """Something happened to a plan (seed 002's telemetry, one event per lifecycle step):
    ``event`` is ``plan_proposed``, ``specs_set``, ``approval_requested``, ``approved``,
    ``executed``, ``completed``, ``aborted``, ``sent_back``, ``conflict`` or ``scheduled``;
    ``actor`` is ``ai``, ``user`` or ``system``; ``status`` is the plan's status after it;
    ``at`` is an ISO 8601 time. ``playbook`` and ``node`` name the node whose tool call made
    it (None for a host's own call)."""

    kind: ClassVar[str] = "plan_event"
    event: str
    plan_id: str
    persona: str
    actor: str
    status: str
    at: str
    reason: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    risk_score: float = 0.0
    playbook: str | None = None
    node: str | None = None


@dataclass(frozen=True, slots=True)
class LLMCalled(Event):
    """Telemetry of one model call."""

    kind: ClassVar[str] = "llm_call"
    record: LLMCallRecord


@dataclass(frozen=True, slots=True)
class WarningRaised(Event):
    """Something the author or host should know that did not stop the pulse."""

    kind: ClassVar[str] = "warning"
    code: str
    message: str
    playbook: str | None = None
    node: str | None = None


@dataclass(frozen=True, slots=True)
class ErrorRaised(NodeEvent):
    """A node failed; ``routed`` says whether its ``error_next`` took over."""

    kind: ClassVar[str] = "error"
    error: dict[str, Any]
    routed: bool


@dataclass(frozen=True, slots=True)
class ToolSettled(NodeEvent):
    """A gated tool's result was settled (:mod:`sea.engine.gates`): with a person's
    ``answer`` (``asked``) or at once (the host's policy; ``answer`` None). ``value`` is what
    the node received instead of the tool's result (a replay gives it again)."""

    kind: ClassVar[str] = "tool_settled"
    tool: str
    action_id: str | None
    asked: bool
    answer: Any
    value: Any


@dataclass(frozen=True, slots=True)
class ApprovalRequested(NodeEvent):
    """The pulse waits for a person: answer with ``Runtime.run_resume(pulse_id, answer)``."""

    kind: ClassVar[str] = "approval_request"
    request: dict[str, Any]


# -- construction ----------------------------------------------------------------------------


def _all_events(root: type[Event]) -> list[type[Event]]:
    """``root`` and the event classes below it (the slotted classes the dataclass decorator
    made, not the ones it replaced, which linger as subclasses until collected)."""
    found = [root]
    for sub in root.__subclasses__():
        if "__slots__" in vars(sub):
            found.extend(_all_events(sub))
    return found


for _cls in _all_events(Event):  # events are made at every step and every action
    fast_init(_cls)

_KINDS: dict[str, type[Event]] = {cls.kind: cls for cls in _all_events(Event)
                                  if "kind" in vars(cls)}


def event_from_json(data: Mapping[str, Any]) -> Event | None:
    """The event whose ``to_json()`` is ``data`` (a host's log read back, e.g. to make a
    trace of a pulse a server ran); None for a kind this version does not know. Fields
    this version does not know are left out; a missing required field raises.

    Raises:
        TypeError: ``data`` lacks a field its kind requires.
    """
    cls = _KINDS.get(str(data.get("kind")))
    if cls is None:
        return None
    given = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}
    if cls is LLMCalled and isinstance(given.get("record"), Mapping):
        record = given["record"]
        given["record"] = LLMCallRecord(**{f.name: record[f.name]
                                           for f in dataclasses.fields(LLMCallRecord)
                                           if f.name in record})
    if cls is MemoryWritten and isinstance(given.get("tags"), list):
        given["tags"] = tuple(given["tags"])
    return cls(**given)
