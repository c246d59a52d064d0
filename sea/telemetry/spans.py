"""One pulse drive as a span tree, made from its events.

A span for each thing that takes time, so that tracing a pulse of a few milliseconds does
not cost as much as the pulse. The drive's root span (``sea.pulse``) stands for the pulse
and its top playbook; each node that does work is a span (``sea.node``) under the span of
the playbook call it belongs to: the root for the top playbook's nodes, the calling node's
span for a called playbook's (named ``sea.node ID (CALLEE)``, with ``sea.callee``). A
call's span says the nodes it ran, in order (``sea.path``, light ones too: ``set`` and
``pass`` only read and write the run's state, so they are not spans; one that fails is a
span event). A node made for one call (an ``llm`` node's model call, a ``tool`` node's
tool call: :attr:`sea.engine.registry.NodeKind.one_call`) is one span with that call,
named and described as the call (``chat MODEL`` after the GenAI conventions,
``execute_tool NAME``); other calls are children of the node that made them, timed from
what their event says. Memory writes, plan events, warnings, errors and the approval a
pulse waits for are span events. A resumed pulse's root span links to the span that
waited (its ``traceparent`` is kept in the pulse's checkpointed origin, so the link
crosses processes).

While a node runs, its span is the current span (of the task that runs it): what the node
does under OpenTelemetry's own context, such as a LangChain tracer's span for the model
call (a host's callbacks on its models still run), nests under it. Node starts and ends
are told by the task that runs the node, so each task's current span moves with them;
the drive's end puts back the context the drive began in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from sea.engine.events import (
    ActionsPlanned,
    ApprovalRequested,
    ErrorRaised,
    Event,
    LLMCalled,
    MemoryWritten,
    NodeEnded,
    NodeStarted,
    PlanChanged,
    PulseEnded,
    PulseStarted,
    RefResolved,
    SubagentEnded,
    SubagentStarted,
    ToolCalled,
    WarningRaised,
)
from sea.telemetry.context import span_context_of, traceparent
from sea.telemetry.genai import attempt_events, call_attributes
from sea.telemetry.meters import Measures, Meters

Sink = Callable[[Event | None], None]

_KINDS = {"model": "LLM", "tool": "TOOL"}
"""OpenInference's span kind of a node made for one call of this kind (else CHAIN)."""
_SET_AT_START = frozenset({"openinference.span.kind", "sea.node"})
"""A call's attributes that its node's span, when it is the call's, already has."""


class Shapes:
    """The node types not shown as a span each, worked out once for a registry's
    :meth:`~sea.engine.registry.Registry.span_shapes`.

    Args:
        shapes: Each such type's shape: ``event``, ``model`` or ``tool``.
    """

    __slots__ = ("given", "light", "one_call")

    def __init__(self, shapes: Mapping[str, str]) -> None:
        self.given = dict(shapes)
        self.light = frozenset(t for t, shape in shapes.items() if shape == "event")
        """In their call's path only (a span event when one fails)."""
        self.one_call = {t: shape for t, shape in shapes.items() if shape != "event"}
        """One span with their call (``model`` or ``tool``)."""


@dataclass(slots=True)
class _Open:
    """A span, and the context in which it is the current span."""

    span: Span
    context: Any
    name: str = ""
    call: str | None = None
    """``model`` or ``tool``: a node span that becomes its node's one call's span."""


@dataclass(slots=True)
class _Call:
    """A playbook call: the span its nodes hang under (the calling node's, or the root's)
    and its open nodes' spans (in start order)."""

    depth: int
    playbook: str
    under: _Open
    nodes: dict[str, _Open] = field(default_factory=dict)
    path: list[str] = field(default_factory=list)
    """Its nodes, in the order they ran (the span's ``sea.path`` when the call ends)."""


class PulseTrace:
    """The spans and metrics of one drive of a pulse (made by
    :meth:`sea.telemetry.Telemetry.pulse`).

    Args:
        tracer: Where spans are made.
        meters: The runtime's instruments.
        pulse_id: The pulse.
        mode: ``start``, ``resume`` or ``continue``.
        capture_content: Put prompts, answers, tool arguments and results in the spans.
        persona_label: A persona's ``sea.persona`` in the metrics (None: not named).
        shapes: Node types not shown as a span each: ``event`` (a span event of their
            playbook call's span), ``model`` or ``tool`` (one span with their call).
    """

    def __init__(self, tracer: trace.Tracer, meters: Meters, pulse_id: str, mode: str, *,
                 capture_content: bool, persona_label: Callable[[str], str | None],
                 shapes: Shapes | None = None) -> None:
        self._label = persona_label
        shaped = shapes or Shapes({})
        self._light, self._one_call = shaped.light, shaped.one_call
        self._tracer = tracer
        self._meters = meters
        self._content = capture_content
        self._mode = mode
        self.root = tracer.start_span(
            "sea.pulse", kind=SpanKind.INTERNAL,
            attributes={"sea.pulse.id": pulse_id, "sea.pulse.mode": mode,
                        "openinference.span.kind": "AGENT"})
        self.traceparent = traceparent(self.root)
        """The root span's W3C ``traceparent`` (kept in the pulse's origin)."""
        self._outer = otel_context.get_current()
        self._top = _Open(self.root, trace.set_span_in_context(self.root))
        self._calls: list[_Call] = []
        self._metric_attrs: dict[str, Any] = {}
        self._usage = {"calls": 0, "tokens_in": 0, "tokens_out": 0, "cost": 0.0}
        self._measures = Measures()
        self.lost = 0
        """Events whose spans or metrics could not be made (an exporter's or a provider's
        failure): the pulse goes on regardless."""
        self.recording = self.root.is_recording()
        """Spans are kept (not a no-op provider, not sampled out): else only the metrics
        are made, and with no-op meters too, nothing at all."""
        self._dispatch = _SPANS if self.recording else _METRICS

    def watch(self, sink: Sink) -> Sink:
        """``sink``, with every event also turned into spans on its way.

        Args:
            sink: Where the drive's events go.

        Returns:
            The sink to give the drive (``sink`` itself when nothing would be made).
        """
        if not self.recording and self._meters.noop:
            return sink
        dispatch = self._dispatch

        def traced(event: Event | None) -> None:
            if event is not None:
                handle = dispatch.get(type(event))
                if handle is not None:
                    try:
                        handle(self, event)
                    except Exception:  # telemetry never fails a pulse: the span is lost
                        self.lost += 1
            sink(event)

        return traced

    def origin(self, persona: str, playbook: str, waited: str | None) -> None:
        """Say whose pulse a resumed (or continued) drive is, and link the span that waited.

        Args:
            persona: The persona.
            playbook: The top-level playbook.
            waited: The ``traceparent`` of the drive that waited (None: not known).
        """
        try:
            self._identify(persona, playbook)
            found = span_context_of(waited)
            if found is not None:
                self.root.add_link(found, {"sea.link": "resumes"})
            if self._mode == "resume":
                self._meters.resumed(self._metric_attrs)
        except Exception:  # telemetry never fails a pulse
            self.lost += 1

    # -- events ---------------------------------------------------------------------------

    def _identify(self, persona: str, playbook: str,
                  more: dict[str, Any] | None = None) -> None:
        self.root.update_name(f"sea.pulse {playbook}")
        self.root.set_attributes({"sea.persona": persona, "sea.playbook": playbook,
                                  **(more or {})})
        label = self._label(persona)
        self._metric_attrs = {"sea.playbook": playbook}
        if label is not None:
            self._metric_attrs["sea.persona"] = label

    def _started(self, event: PulseStarted) -> None:
        more: dict[str, Any] = {"sea.pulse.input_chars": len(event.input)}
        if self._content:
            more["input.value"] = event.input
        self._identify(event.persona_id, event.playbook, more)

    def _node_started(self, event: NodeStarted) -> None:
        if event.node_type in self._light:  # in its call's path when it ends
            return
        call = self._call_at(event.depth, event.playbook)
        one_call = self._one_call.get(event.node_type)
        attrs: dict[str, Any] = {  # its playbook and depth are its parent's
            "sea.node": event.node, "sea.node.type": event.node_type,
            "openinference.span.kind": _KINDS.get(one_call or "", "CHAIN"),
        }
        kind = SpanKind.CLIENT if one_call == "model" else SpanKind.INTERNAL
        name = f"sea.node {event.node}"
        span = self._tracer.start_span(name, call.under.context, kind, attributes=attrs)
        opened = call.nodes[event.node] = _Open(
            span, trace.set_span_in_context(span), name, one_call)
        otel_context.attach(opened.context)  # current in the node's task until it ends

    def _node_ended(self, event: NodeEnded) -> None:
        if event.node_type in self._light:  # in the path only; not measured: microseconds
            passed = self._call_at(event.depth, event.playbook)
            passed.path.append(event.node)
            if event.outcome != "ok":
                passed.under.span.add_event("sea.node", {
                    "sea.node": event.node, "sea.node.type": event.node_type,
                    "sea.node.outcome": event.outcome})
            return
        self._node_metric(event)
        call = self._last_at(event.depth, event.playbook)
        if call is None:  # deeper calls ended with their caller
            self._close_below(event.depth)
            call = self._find(event.depth, event.playbook)
        opened = None if call is None else call.nodes.pop(event.node, None)
        if opened is None or call is None:
            return
        call.path.append(event.node)
        otel_context.attach(self._innermost().context)
        span = opened.span
        if event.outcome != "ok":  # ok unless it says otherwise (one attribute less to set)
            span.set_attribute("sea.node.outcome", event.outcome)
            span.set_status(Status(StatusCode.ERROR, event.outcome))
        span.end()

    def _node_metric(self, event: NodeEnded) -> None:
        self._measures.nodes.append((event.duration_s, event.node_type, event.outcome))

    def _llm_called(self, event: LLMCalled) -> None:
        record = event.record
        attrs = call_attributes(record, self._content)
        name = f"chat {record.model}"
        under = self._open_of(record.playbook, record.node)
        own = _own_call(under, "model", name, attrs)
        span = own or self._timed(name, under, record.latency_s, attrs, SpanKind.CLIENT)
        for event_name, values in attempt_events(record, self._content):
            span.add_event(event_name, values)
        if record.outcome != "ok":
            span.set_status(Status(StatusCode.ERROR, record.error or record.outcome))
        if own is None:  # the node's own span ends with the node
            span.end()
        self._llm_metric(event)

    def _llm_metric(self, event: LLMCalled) -> None:
        record = event.record
        usage = self._usage
        usage["calls"] += 1
        usage["tokens_in"] += max(0, record.tokens_in)
        usage["tokens_out"] += max(0, record.tokens_out)
        usage["cost"] += max(0.0, record.cost)
        self._measures.calls.append(record)

    def _tool_called(self, event: ToolCalled) -> None:
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.tool,
            "openinference.span.kind": "TOOL",
            "sea.tool.args_chars": len(_json(event.args)),
            "sea.tool.result_chars": len(_json(event.result)),
        }
        refs = sum(1 for v in event.args.values() if isinstance(v, str) and v.startswith("ref:"))
        if refs:  # said only when not 0, and failures only (each attribute costs the SDK)
            attrs["sea.tool.refs"] = refs
        if not event.ok:
            attrs["sea.tool.ok"] = False
        if event.action_id is not None:
            attrs["sea.action.id"] = event.action_id
        if self._content:
            attrs["gen_ai.tool.call.arguments"] = _json(event.args)
            attrs["gen_ai.tool.call.result"] = _json(event.result)
        name = f"execute_tool {event.tool}"
        under = self._open_of(event.playbook, event.node)
        own = _own_call(under, "tool", name, attrs)
        span = own or self._timed(name, under, event.duration_s, attrs, SpanKind.INTERNAL)
        if not event.ok:
            code = str((event.error or {}).get("code") or "tool_error")
            span.set_attribute("error.type", code)
            span.set_status(Status(StatusCode.ERROR, str((event.error or {}).get("message", ""))))
            self._meters.error(self._metric_attrs, code)
        if own is None:  # the node's own span ends with the node
            span.end()

    def _memory_written(self, event: MemoryWritten) -> None:
        attrs: dict[str, Any] = {
            "sea.memory.message_id": event.message_id, "sea.memory.role": event.role,
            "sea.memory.tags": ",".join(event.tags), "sea.memory.chars": len(event.content),
        }
        if event.thread is not None:
            attrs["sea.memory.thread"] = event.thread
        if self._content:
            attrs["sea.memory.content"] = event.content
        self._span_of(event.playbook, event.node).add_event("sea.memory.write", attrs)

    def _approval(self, event: ApprovalRequested) -> None:
        attrs: dict[str, Any] = {"sea.playbook": event.playbook, "sea.node": event.node}
        kind = event.request.get("kind") or event.request.get("type")
        if isinstance(kind, str):
            attrs["sea.approval.kind"] = kind
        self.root.add_event("sea.approval.requested", attrs)

    def _plan(self, event: PlanChanged) -> None:
        attrs: dict[str, Any] = {"sea.plan.id": event.plan_id, "sea.plan.event": event.event,
                 "sea.plan.actor": event.actor, "sea.plan.status": event.status,
                 "sea.plan.risk_score": event.risk_score}
        self._span_of(event.playbook, event.node).add_event(f"sea.plan.{event.event}", attrs)

    def _error(self, event: ErrorRaised) -> None:
        code = str(event.error.get("code") or "error")
        self._span_of(event.playbook, event.node).add_event(
            "sea.error", {"error.type": code, "sea.error.routed": event.routed,
                          "sea.error.message": str(event.error.get("message", ""))})
        self._meters.error(self._metric_attrs, code)

    def _error_metric(self, event: ErrorRaised) -> None:
        self._meters.error(self._metric_attrs, str(event.error.get("code") or "error"))

    def _warning(self, event: WarningRaised) -> None:
        self._span_of(event.playbook, event.node).add_event(
            "sea.warning", {"sea.warning.code": event.code})

    def _note(self, event: Any) -> None:
        self._span_of(event.playbook, event.node).add_event(f"sea.{event.kind}")

    def _ended(self, event: PulseEnded) -> None:
        self._close_below(-1)
        usage = self._usage
        self.root.set_attributes({
            "sea.pulse.status": event.status, "sea.pulse.model_calls": usage["calls"],
            "sea.pulse.tokens_in": usage["tokens_in"],
            "sea.pulse.tokens_out": usage["tokens_out"], "sea.pulse.cost": usage["cost"],
        })
        if event.status == "error" and event.error is not None:
            code = str(event.error.get("code") or "error")
            self.root.set_attribute("error.type", code)
            self.root.set_status(Status(StatusCode.ERROR, str(event.error.get("message", ""))))
            self._meters.error(self._metric_attrs, code)
        elif event.status == "ok":
            self.root.set_status(Status(StatusCode.OK))
        self.root.end()
        otel_context.attach(self._outer)
        self._ended_metric(event)

    def _ended_metric(self, event: PulseEnded) -> None:
        if event.status == "error" and not self.recording:
            self._meters.error(self._metric_attrs, str((event.error or {}).get("code")
                                                       or "error"))
        self._measures.record(self._meters, self._metric_attrs, event.status,
                              event.duration_s, self._top.context if self.recording else None)

    # -- the tree -------------------------------------------------------------------------

    def _last_at(self, depth: int, playbook: str) -> _Call | None:
        """The innermost playbook call, if it is the one a node at ``depth`` of
        ``playbook`` belongs to (as it is for most nodes: then no call ends)."""
        calls = self._calls
        if calls:
            last = calls[-1]
            if last.depth == depth and last.playbook == playbook:
                return last
        return None

    def _call_at(self, depth: int, playbook: str) -> _Call:
        """The playbook call a node at ``depth`` of ``playbook`` belongs to (opened now,
        under the node that called it, if it is new)."""
        last = self._last_at(depth, playbook)
        if last is not None:  # the calls' depths rise: none is deeper than the last
            return last
        self._close_below(depth)
        found = self._find(depth, playbook)
        if found is not None:
            return found
        if self._calls and self._calls[-1].depth == depth:  # another playbook at that depth
            self._end_call(self._calls.pop())
        under = self._innermost()
        if under is not self._top:  # the calling node's span names its callee
            under.span.update_name(f"{under.name} ({playbook})")
            under.span.set_attribute("sea.callee", playbook)
        call = _Call(depth, playbook, under)
        self._calls.append(call)
        return call

    def _find(self, depth: int, playbook: str) -> _Call | None:
        for call in reversed(self._calls):
            if call.depth == depth and call.playbook == playbook:
                return call
        return None

    def _close_below(self, depth: int) -> None:
        """End the playbook calls deeper than ``depth`` (their caller moved on)."""
        while self._calls and self._calls[-1].depth > depth:
            self._end_call(self._calls.pop())

    def _end_call(self, call: _Call) -> None:
        for opened in call.nodes.values():
            opened.span.end()
        if call.path:
            call.under.span.set_attribute("sea.path", call.path)

    def _innermost(self) -> _Open:
        """The span a new child belongs under: the last open node, else the root."""
        for call in reversed(self._calls):
            if call.nodes:
                return next(reversed(call.nodes.values()))
            return call.under
        return self._top

    def _span_of(self, playbook: str | None, node: str | None) -> Span:
        """The open span of a node (else its playbook call's, else the innermost span)."""
        return self._open_of(playbook, node).span

    def _open_of(self, playbook: str | None, node: str | None) -> _Open:
        if playbook is not None and node is not None:
            for call in reversed(self._calls):
                if call.playbook == playbook:
                    return call.nodes.get(node) or call.under
        return self._innermost()

    def _timed(self, name: str, under: _Open, duration_s: float, attrs: dict[str, Any],
               kind: SpanKind) -> Span:
        """A span of something that just ended, after ``duration_s``, under its node's."""
        end = time.time_ns()
        start = end - int(max(0.0, duration_s) * 1e9)
        return self._tracer.start_span(name, under.context, kind, attributes=attrs,
                                       start_time=start)


_Handler = Callable[[PulseTrace, Any], None]
_METRICS: dict[type[Event], _Handler] = {
    PulseStarted: PulseTrace._started, NodeEnded: PulseTrace._node_metric,
    LLMCalled: PulseTrace._llm_metric, ErrorRaised: PulseTrace._error_metric,
    PulseEnded: PulseTrace._ended_metric,
}
"""What a drive whose spans are not kept handles: its metrics."""
_SPANS: dict[type[Event], _Handler] = {
    **_METRICS,
    NodeStarted: PulseTrace._node_started, NodeEnded: PulseTrace._node_ended,
    LLMCalled: PulseTrace._llm_called, ToolCalled: PulseTrace._tool_called,
    MemoryWritten: PulseTrace._memory_written, ApprovalRequested: PulseTrace._approval,
    PlanChanged: PulseTrace._plan, ErrorRaised: PulseTrace._error,
    WarningRaised: PulseTrace._warning, SubagentStarted: PulseTrace._note,
    SubagentEnded: PulseTrace._note, ActionsPlanned: PulseTrace._note,
    RefResolved: PulseTrace._note, PulseEnded: PulseTrace._ended,
}
"""What a drive whose spans are kept handles: its spans and metrics."""


def _own_call(opened: _Open, call: str, name: str, attrs: dict[str, Any]) -> Span | None:
    """The span of a node made for one call of this kind (``model``, ``tool``), now named
    and described as that call's (None: the call gets a span of its own; a second call of
    the node does)."""
    if opened.call != call:
        return None
    opened.call = None
    opened.span.update_name(name)
    opened.span.set_attributes(  # its kind and node: set when the node started
        {k: v for k, v in attrs.items() if k not in _SET_AT_START})
    return opened.span


def _json(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=str).decode()

