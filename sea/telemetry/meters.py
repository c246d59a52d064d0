"""The metrics of pulses: durations (whose counts are the pulses), tokens, cost, errors,
approvals waiting.

The model calls' instruments follow the GenAI semantic conventions
(``gen_ai.client.operation.duration``, ``gen_ai.client.token.usage``, with their advised
bucket boundaries); the others are SEA's own (``sea.*``). As in the conventions, a
duration histogram's count is the count of what it times: ``sea.pulse.duration`` counts
the pulses by status, ``gen_ai.client.operation.duration`` the model calls. Their
attributes are bounded: playbook and node type (the host's own playbooks), status and
outcome (a few words), an error's code, and the persona when the host allows
(:meth:`sea.telemetry.Telemetry.persona_label`).

A pulse's node durations and model calls are measured when the pulse's drive ends, all at
once (:class:`Measures`): a pulse of a few milliseconds then pays for its metrics in one
place, not between its nodes; the drive's duration keeps an exemplar of its trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.metrics import Meter, NoOpMeter

from sea.llm.records import LLMCallRecord

_SECONDS = "s"
_DURATIONS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
              5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""Bucket boundaries of a pulse's and a node's duration: from a ``set`` node's half a
millisecond to a pulse of minutes (the SDK's default buckets start at 5)."""
_CALL_SECONDS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                 40.96, 81.92)
"""``gen_ai.client.operation.duration``'s boundaries, as the GenAI conventions advise."""
_TOKENS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
           16777216, 67108864)
"""``gen_ai.client.token.usage``'s boundaries, as the GenAI conventions advise."""
_NO_EXEMPLAR = trace.set_span_in_context(trace.INVALID_SPAN)
"""A measurement's context with no span to be its exemplar (an empty context would be
taken for the current one)."""


class Meters:
    """The instruments, made once per runtime.

    Args:
        meter: Where they are made.
    """

    def __init__(self, meter: Meter) -> None:
        self.noop = isinstance(meter, NoOpMeter)
        """The meter records nothing (a no-op provider): the instruments are not used."""
        self.pulse_duration = meter.create_histogram(
            "sea.pulse.duration", unit=_SECONDS,
            description="How long a pulse drive took (its count: the drives, by status)",
            explicit_bucket_boundaries_advisory=_DURATIONS)
        self.node_duration = meter.create_histogram(
            "sea.node.duration", unit=_SECONDS, description="How long a node ran",
            explicit_bucket_boundaries_advisory=_DURATIONS)
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit=_SECONDS,
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=_CALL_SECONDS)
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}",
            description="Measures number of input and output tokens used",
            explicit_bucket_boundaries_advisory=_TOKENS)
        self.cost = meter.create_counter(
            "sea.model.cost", unit="{currency}", description="What model calls cost")
        self.errors = meter.create_counter(
            "sea.errors", unit="{error}", description="Failures, by code")
        self.approvals_waiting = meter.create_up_down_counter(
            "sea.approvals.waiting", unit="{pulse}",
            description="Pulses waiting for a person's answer (ended waiting minus resumed)")

    def resumed(self, attrs: dict[str, Any]) -> None:
        """A waiting pulse was answered."""
        self.approvals_waiting.add(-1, attrs)

    def error(self, attrs: dict[str, Any], code: str) -> None:
        """Count a failure by its code."""
        self.errors.add(1, {**attrs, "error.type": code})


@dataclass(slots=True)
class Measures:
    """What one drive of a pulse measured, kept until it ends (:meth:`record`)."""

    nodes: list[tuple[float, str, str]] = field(default_factory=list)
    """Each node that ran (not ``set`` or ``pass``): its seconds, type and outcome."""
    calls: list[LLMCallRecord] = field(default_factory=list)
    """Each model call."""

    def record(self, meters: Meters, attrs: dict[str, Any], status: str, duration_s: float,
               exemplar: Context | None) -> None:
        """Record the drive's metrics: its duration (with an exemplar of ``exemplar``'s
        span, the drive's root span), its nodes' durations and its model calls.

        Args:
            meters: The instruments.
            attrs: The pulse's attributes (playbook, persona).
            status: How the drive ended.
            duration_s: How long it took.
            exemplar: The context whose span the drive's duration points to.
        """
        labelled = {**attrs, "sea.pulse.status": status}
        meters.pulse_duration.record(max(0.0, duration_s), labelled, context=exemplar)
        if status == "waiting":
            meters.approvals_waiting.add(1, attrs)
        for seconds, node_type, outcome in self.nodes:
            meters.node_duration.record(
                max(0.0, seconds), {"sea.node.type": node_type, "sea.node.outcome": outcome},
                context=_NO_EXEMPLAR)
        for call in self.calls:
            _model_call(meters, attrs, call, _NO_EXEMPLAR)
        self.nodes.clear()
        self.calls.clear()


def _model_call(meters: Meters, attrs: dict[str, Any], record: LLMCallRecord,
                context: Context) -> None:
    """Record one model call's duration (its count is the histogram's: the calls, by
    ``error.type``), tokens (input and output) and cost."""
    base = {**attrs, "gen_ai.operation.name": "chat", "gen_ai.request.model": record.model}
    timed = base if record.outcome == "ok" else {**base, "error.type": record.outcome}
    meters.operation_duration.record(max(0.0, record.latency_s), timed, context=context)
    for kind, count in (("input", record.tokens_in), ("output", record.tokens_out)):
        if count > 0:
            meters.tokens.record(count, {**base, "gen_ai.token.type": kind}, context=context)
    if record.cost > 0:
        meters.cost.add(record.cost, base, context=context)
