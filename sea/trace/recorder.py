"""Recording a pulse: turn its event stream into a :class:`Trace`.

The recorder is an ordinary consumer of the events a host receives, so recording needs
nothing from the engine beyond what every host already gets. Before the pulse starts, the
caller snapshots the earlier conversation the pulse can see (:func:`history_snapshot`), and
the short-term memory and cut conversation Main is composed from (:func:`short_term_snapshot`),
so a replay can seed a fresh store with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel

from saimemory import HistoryBudget, MessageStore, Persona
from saimemory.fold import cut_below
from saimemory.jsonl import message_record
from sea.engine.events import (
    ActionEnded,
    ActionsPlanned,
    ActionStarted,
    Event,
    LLMCalled,
    MemoryWritten,
    NodeStarted,
    PlanChanged,
    PulseEnded,
    RefResolved,
    Spoken,
    SubagentEnded,
    ToolCalled,
    ToolSettled,
)
from sea.errors import UsageError
from sea.llm.compose import read_main
from sea.llm.options import DEFAULT_FOLD_LIMIT
from sea.trace.format import (
    TRACE_VERSION,
    Trace,
    TraceAction,
    TraceLLMCall,
    TraceMemoryWrite,
    TraceNode,
    TraceNormalization,
    TracePersona,
    TracePlan,
    TracePlanEvent,
    TraceSettled,
    TraceShortTerm,
    TraceSubagent,
    TraceTool,
    TraceToolCall,
)


def history_snapshot(
    store: MessageStore, persona: str, budget: HistoryBudget, pulse_id: str
) -> list[dict[str, Any]]:
    """The earlier conversation a pulse about to start as ``pulse_id`` can see, as JSON lines."""
    threads = {thread.id: thread for thread in store.threads(persona)}
    return [
        _plain(message_record(message, threads.get(message.thread)))
        for message in store.history(persona, pulse_id=pulse_id, budget=budget)
    ]


def short_term_snapshot(
    store: MessageStore,
    persona: str,
    budget: HistoryBudget,
    pulse_id: str,
    *,
    fold_limit: int = DEFAULT_FOLD_LIMIT,
) -> TraceShortTerm | None:
    """The short-term memory and the cut conversation the contexts of a pulse about to start
    as ``pulse_id`` are composed from (None when the history budget cuts nothing).

    Main reads the same earlier conversation throughout a pulse (its own messages are not
    earlier conversation), so what it needs is known before the pulse starts: the stored
    summary and the cut messages it does not cover yet (what the light model folds in), or,
    when it covers them all, the newest cut message (which tells Main the history was cut).
    ``fold_limit`` is the runtime's ``LLMOptions.fold_limit``.
    """
    main = read_main(store, persona, pulse_id=pulse_id, budget=budget, fold_limit=fold_limit)
    if not main.cut:
        return None
    summary = main.short_term.text if main.short_term is not None else None
    cut, covered = main.unfolded, False
    if not cut:
        cut = store.conversation_before(persona, before=cut_below(main.history, pulse_id),
                                        limit=1, exclude_pulse=pulse_id)
        covered = True
    threads = {thread.id: thread for thread in store.threads(persona)}
    lines = [_plain(message_record(m, threads.get(m.thread))) for m in cut]
    return TraceShortTerm(summary=summary, cut=lines, covered=covered)


def write_trace(trace: Trace, path: Path) -> None:
    """Write ``trace`` to ``path`` as indented JSON.

    Raises:
        UsageError: the file cannot be written (the message says why).
    """
    data = trace.model_dump(by_alias=True, exclude={"schema_"})
    try:
        path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    except OSError as exc:
        raise UsageError(f"cannot write the trace {path}: {exc.strerror}") from exc


def _plain(value: Any) -> Any:
    """``value`` as plain JSON data (tuples become lists, dataclasses dicts)."""
    return orjson.loads(orjson.dumps(value, default=_default))


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    return str(value)


@dataclass
class _Draft:
    """An action being recorded (its entry is made when the trace is)."""

    seq: int
    playbook: str
    node: str
    action_id: str
    tool: str
    parameters: dict[str, Any]
    status: str = "incomplete"
    arguments: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    normalized: list[TraceNormalization] = field(default_factory=list)

    def entry(self) -> TraceAction:
        """The trace entry of the action."""
        return _entry(TraceAction, self)


@dataclass
class _Actions:
    """The actions of a pulse's ``actions`` nodes, from their events.

    An action that runs has an ``action_start`` event, then its ``ref_resolved`` events, its
    tool call and its ``action_end``; a skipped action has only its ``action_end``, so its
    planned parameters are taken from the latest plan of its node.
    """

    _drafts: list[_Draft] = field(default_factory=list)
    _planned: dict[tuple[str, str], dict[str, dict[str, Any]]] = field(default_factory=dict)

    def plan(self, event: ActionsPlanned) -> None:
        """Remember a node's latest plan: its actions' parameters by id."""
        self._planned[(event.playbook, event.node)] = {
            str(action.get("action_id")): _plain(action.get("parameters") or {})
            for action in event.actions
        }

    def observe(self, seq: int, event: ActionStarted | RefResolved | ActionEnded) -> None:
        """Take an action's start, a ref it resolved, or its end."""
        if isinstance(event, ActionStarted):
            self._drafts.append(
                _Draft(seq, event.playbook, event.node, event.action_id, event.tool,
                       _plain(event.parameters))
            )
            return
        draft = self._open(event.playbook, event.node, event.action_id)
        if isinstance(event, RefResolved):
            if draft is not None:
                draft.normalized.append(_entry(TraceNormalization, event))
            return
        if draft is None:  # skipped: never started
            planned = self._planned.get((event.playbook, event.node), {})
            draft = _Draft(seq, event.playbook, event.node, event.action_id, event.tool,
                           planned.get(event.action_id, {}))
            self._drafts.append(draft)
        draft.status = event.status
        draft.error = _plain(event.error) if event.error else None

    def called(self, event: ToolCalled) -> None:
        """Keep the arguments of an action's tool call."""
        if event.action_id is None:
            return
        draft = self._open(event.playbook, event.node, event.action_id)
        if draft is not None:
            draft.arguments = _plain(event.args)

    def entries(self) -> list[TraceAction]:
        """The recorded actions, in event order."""
        return [draft.entry() for draft in self._drafts]

    def _open(self, playbook: str, node: str, action_id: str) -> _Draft | None:
        """The started, unfinished action of that node with that id."""
        for draft in reversed(self._drafts):
            if (draft.playbook, draft.node, draft.action_id) == (playbook, node, action_id):
                return draft if draft.status == "incomplete" else None
        return None


@dataclass
class TraceRecorder:
    """Collects a pulse's events into a trace (feed it every event, in order)."""

    persona: Persona
    playbook: str
    input: str
    pulse_id: str
    history: list[dict[str, Any]]
    args: dict[str, Any] = field(default_factory=dict)
    playbook_dirs: list[str] = field(default_factory=list)
    pins: list[str] = field(default_factory=list)
    short_term: TraceShortTerm | None = None
    recorded_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    _seq: int = 0
    _nodes: list[TraceNode] = field(default_factory=list)
    _llm: list[TraceLLMCall] = field(default_factory=list)
    _tools: list[TraceToolCall] = field(default_factory=list)
    _writes: list[TraceMemoryWrite] = field(default_factory=list)
    _spoken: list[str] = field(default_factory=list)
    _plans: list[TracePlan] = field(default_factory=list)
    _plan_events: list[TracePlanEvent] = field(default_factory=list)
    _subagents: list[TraceSubagent] = field(default_factory=list)
    _settled: list[TraceSettled] = field(default_factory=list)
    _actions: _Actions = field(default_factory=_Actions)
    _offered: dict[str, TraceTool] = field(default_factory=dict)
    _end: PulseEnded | None = None

    def observe(self, event: Event) -> None:
        """Take one event of the pulse."""
        self._seq += 1
        seq = self._seq
        if isinstance(event, NodeStarted):
            self._nodes.append(_entry(TraceNode, event, seq=seq, type=event.node_type))
        elif isinstance(event, LLMCalled):
            self._llm.append(_entry(TraceLLMCall, event.record, seq=seq))
        elif isinstance(event, ToolCalled):
            self._tools.append(_entry(TraceToolCall, event, seq=seq))
            self._actions.called(event)
        elif isinstance(event, ActionsPlanned):
            self._planned(event)
        elif isinstance(event, ActionStarted | RefResolved | ActionEnded):
            self._actions.observe(self._seq, event)
        elif isinstance(event, MemoryWritten):
            self._writes.append(_entry(TraceMemoryWrite, event, seq=seq))
        elif isinstance(event, PlanChanged):
            self._plan_events.append(_entry(TracePlanEvent, event, seq=seq))
        elif isinstance(event, ToolSettled):
            self._settled.append(_entry(TraceSettled, event, seq=seq))
        elif isinstance(event, SubagentEnded):
            self._subagents.append(_entry(TraceSubagent, event, seq=seq))
        elif isinstance(event, Spoken):
            self._spoken.append(event.text)
        elif isinstance(event, PulseEnded):
            self._end = event

    def trace(self, playbook_hashes: dict[str, str]) -> Trace:
        """The finished trace; ``playbook_hashes`` maps every playbook run to its hash."""
        end = self._end
        return Trace(
            version=TRACE_VERSION,
            pulse_id=self.pulse_id,
            recorded_at=self.recorded_at.isoformat(),
            playbook=self.playbook,
            playbook_hashes=playbook_hashes,
            persona=TracePersona(
                id=self.persona.id,
                name=self.persona.name,
                system_prompt=self.persona.system_prompt,
            ),
            input=self.input,
            args=_plain(self.args),
            playbook_dirs=self.playbook_dirs,
            history=self.history,
            pins=list(self.pins),
            short_term=self.short_term,
            nodes=self._nodes,
            llm_calls=self._llm,
            tool_calls=self._tools,
            plans=self._plans,
            actions=self._actions.entries(),
            tools=self._offered,
            memory_writes=self._writes,
            plan_events=self._plan_events,
            subagents=self._subagents,
            settled=self._settled,
            spoken=self._spoken,
            status=end.status if end else "incomplete",
            error=_plain(end.error) if end and end.error else None,
            duration_s=end.duration_s if end else 0.0,
        )

    def _planned(self, event: ActionsPlanned) -> None:
        self._plans.append(
            _entry(TracePlan, event, seq=self._seq, offered=list(event.catalogue)))
        self._actions.plan(event)
        for name, spec in _plain(event.catalogue).items():
            self._offered.setdefault(name, TraceTool.model_validate(spec))

    def playbooks_run(self) -> list[str]:
        """Names of the playbooks whose nodes ran, in first-run order."""
        return list(dict.fromkeys(node.playbook for node in self._nodes))


_E = TypeVar("_E", bound=BaseModel)


def _entry(entry: type[_E], fact: Any, **given: Any) -> _E:
    """The trace entry ``entry`` of a fact (an event, a model call's record, an action): each
    field of the entry the fact has, by the same name, as plain JSON, and ``given`` (``seq``,
    or a field the fact names otherwise).

    The trace copies no field by hand: an entry is what its fact says, so a field added to
    both is recorded without a change here.
    """
    data = {name: getattr(fact, name) for name in entry.model_fields
            if name not in given and hasattr(fact, name)}
    return entry.model_validate({**_plain(data), **given})
