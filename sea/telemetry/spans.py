"""One pulse drive as a span tree, made from its events.

The drive's root span (``sea.pulse``) holds one span per playbook call (``sea.playbook``)
and, inside it, one per node (``sea.node``); a node that calls a playbook holds the
callee's span. A model call (``chat MODEL``, after the GenAI conventions), a tool call
(``execute_tool NAME``) and a memory write (``sea.memory.write``) are children of the node
that made them, timed from what their event says; plan events, warnings, errors and the
approval a pulse waits for are span events. A resumed pulse's root span links to the span
that waited (its ``traceparent`` is kept in the pulse's checkpointed origin, so the link
crosses processes).

While a node runs, its span is the current span (of the task that runs it): what the node
does under OpenTelemetry's own context, such as a LangChain tracer's span for the model
call (a host's callbacks on its models still run), nests under it. Node starts and ends
are told by the task that runs the node, so each task's current span moves with them;
the drive's end puts back the context the drive began in.
"""

from __future__ import annotations

import time
from collections.abc import Callable
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
from sea.telemetry.meters import Meters, model_call

Sink = Callable[[Event | None], None]


@dataclass(slots=True)
class _Call:
    """A playbook call: its span and its open nodes' spans (in start order)."""

    depth: int
    playbook: str
    span: Span
    nodes: dict[str, Span] = field(default_factory=dict)
    last: str | None = None
    """The node that ended last at this depth: where the next one came from (the route)."""


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
    """

    def __init__(self, tracer: trace.Tracer, meters: Meters, pulse_id: str, mode: str, *,
                 capture_content: bool, persona_label: Callable[[str], str | None]) -> None:
        self._label = persona_label
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
        self._calls: list[_Call] = []
        self._metric_attrs: dict[str, Any] = {}
        self._usage = {"calls": 0, "tokens_in": 0, "tokens_out": 0, "cost": 0.0}
        self.lost = 0
        """Events whose spans or metrics could not be made (an exporter's or a provider's
        failure): the pulse goes on regardless."""
        self.recording = self.root.is_recording()
        """Spans are kept (not a no-op provider, not sampled out): else only the metrics
        are made, and with no-op meters too, nothing at all."""
        self._dispatch: dict[type[Event], Callable[[Any], None]] = {
            PulseStarted: self._started, NodeEnded: self._node_metric,
            LLMCalled: self._llm_metric, ErrorRaised: self._error_metric,
            PulseEnded: self._ended_metric,
        }
        if self.recording:
            self._dispatch.update({
                NodeStarted: self._node_started, NodeEnded: self._node_ended,
                LLMCalled: self._llm_called, ToolCalled: self._tool_called,
                MemoryWritten: self._memory_written, ApprovalRequested: self._approval,
                PlanChanged: self._plan, ErrorRaised: self._error,
                WarningRaised: self._warning, SubagentStarted: self._note,
                SubagentEnded: self._note, ActionsPlanned: self._note,
                RefResolved: self._note, PulseEnded: self._ended,
            })

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
                        handle(event)
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

    def _identify(self, persona: str, playbook: str) -> None:
        self.root.update_name(f"sea.pulse {playbook}")
        self.root.set_attributes({"sea.persona": persona, "sea.playbook": playbook})
        label = self._label(persona)
        self._metric_attrs = {"sea.playbook": playbook}
        if label is not None:
            self._metric_attrs["sea.persona"] = label

    def _started(self, event: PulseStarted) -> None:
        self._identify(event.persona_id, event.playbook)
        self.root.set_attribute("sea.pulse.input_chars", len(event.input))
        if self._content:
            self.root.set_attribute("input.value", event.input)

    def _node_started(self, event: NodeStarted) -> None:
        call = self._call_at(event.depth, event.playbook)
        attrs: dict[str, Any] = {  # its playbook and depth are its parent's
            "sea.node": event.node, "sea.node.type": event.node_type,
            "openinference.span.kind": "CHAIN",
        }
        if call.last is not None:
            attrs["sea.node.from"] = call.last
        span = self._tracer.start_span(f"sea.node {event.node}", _under(call.span),
                                       attributes=attrs)
        call.nodes[event.node] = span
        otel_context.attach(_under(span))  # current in the node's task until it ends

    def _node_ended(self, event: NodeEnded) -> None:
        self._close_below(event.depth)
        call = self._find(event.depth, event.playbook)
        span = None if call is None else call.nodes.pop(event.node, None)
        if span is None or call is None:
            self._node_metric(event)
            return
        call.last = event.node
        otel_context.attach(_under(self._innermost()))
        if event.outcome != "ok":  # ok unless it says otherwise (one attribute less to set)
            span.set_attribute("sea.node.outcome", event.outcome)
            span.set_status(Status(StatusCode.ERROR, event.outcome))
        span.end()
        self._node_metric(event)

    def _node_metric(self, event: NodeEnded) -> None:
        self._meters.node_duration.record(  # bounded and cheap: two short attributes
            max(0.0, event.duration_s),
            {"sea.node.type": event.node_type, "sea.node.outcome": event.outcome})

    def _llm_called(self, event: LLMCalled) -> None:
        record = event.record
        attrs = call_attributes(record, self._content)
        span = self._timed(f"chat {record.model}", record.playbook, record.node,
                           record.latency_s, attrs, SpanKind.CLIENT)
        for name, values in attempt_events(record, self._content):
            span.add_event(name, values)
        if record.outcome != "ok":
            span.set_status(Status(StatusCode.ERROR, record.error or record.outcome))
        span.end()
        self._llm_metric(event)

    def _llm_metric(self, event: LLMCalled) -> None:
        record = event.record
        usage = self._usage
        usage["calls"] += 1
        usage["tokens_in"] += max(0, record.tokens_in)
        usage["tokens_out"] += max(0, record.tokens_out)
        usage["cost"] += max(0.0, record.cost)
        model_call(self._meters, self._metric_attrs, record.model, record.outcome,
                   record.latency_s, (record.tokens_in, record.tokens_out), record.cost)

    def _tool_called(self, event: ToolCalled) -> None:
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.tool,
            "openinference.span.kind": "TOOL", "sea.tool.ok": event.ok,
            "sea.tool.args_chars": len(_json(event.args)),
            "sea.tool.result_chars": len(_json(event.result)),
            "sea.tool.refs": sum(1 for v in event.args.values()
                                 if isinstance(v, str) and v.startswith("ref:")),
        }
        if event.action_id is not None:
            attrs["sea.action.id"] = event.action_id
        if self._content:
            attrs["gen_ai.tool.call.arguments"] = _json(event.args)
            attrs["gen_ai.tool.call.result"] = _json(event.result)
        span = self._timed(f"execute_tool {event.tool}", event.playbook, event.node,
                           event.duration_s, attrs, SpanKind.INTERNAL)
        if not event.ok:
            code = str((event.error or {}).get("code") or "tool_error")
            span.set_attribute("error.type", code)
            span.set_status(Status(StatusCode.ERROR, str((event.error or {}).get("message", ""))))
            self._meters.error(self._metric_attrs, code)
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
        self._meters.pulse_ended(self._metric_attrs, event.status, event.duration_s)

    # -- the tree -------------------------------------------------------------------------

    def _call_at(self, depth: int, playbook: str) -> _Call:
        """The playbook call a node at ``depth`` of ``playbook`` belongs to (opened now,
        under the node that called it, if it is new)."""
        self._close_below(depth)
        found = self._find(depth, playbook)
        if found is not None:
            return found
        if self._calls and self._calls[-1].depth == depth:  # another playbook at that depth
            self._end_call(self._calls.pop())
        parent = self._innermost()
        span = self._tracer.start_span(
            f"sea.playbook {playbook}", _under(parent),
            attributes={"sea.playbook": playbook, "sea.depth": depth,
                        "openinference.span.kind": "CHAIN"})
        call = _Call(depth, playbook, span)
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
        for span in call.nodes.values():
            span.end()
        call.span.end()

    def _innermost(self) -> Span:
        """The span a new child belongs under: the last open node, else the root."""
        for call in reversed(self._calls):
            if call.nodes:
                return next(reversed(call.nodes.values()))
            return call.span
        return self.root

    def _span_of(self, playbook: str | None, node: str | None) -> Span:
        """The open span of a node (else the innermost span)."""
        if playbook is not None and node is not None:
            for call in reversed(self._calls):
                if call.playbook == playbook and node in call.nodes:
                    return call.nodes[node]
        return self._innermost()

    def _timed(self, name: str, playbook: str | None, node: str | None, duration_s: float,
               attrs: dict[str, Any], kind: SpanKind) -> Span:
        """A span of something that just ended, after ``duration_s``, under its node."""
        end = time.time_ns()
        start = end - int(max(0.0, duration_s) * 1e9)
        return self._tracer.start_span(name, _under(self._span_of(playbook, node)), kind,
                                       attributes=attrs, start_time=start)


def _under(span: Span) -> Any:
    return trace.set_span_in_context(span)


def _json(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=str).decode()

