"""The metrics of pulses: counts, durations, tokens, cost, errors, approvals waiting.

The model calls' instruments follow the GenAI semantic conventions
(``gen_ai.client.operation.duration``, ``gen_ai.client.token.usage``); the others are
SEA's own (``sea.*``). Their attributes are bounded: playbook and node type (the host's
own playbooks), status and outcome (a few words), an error's code, and the persona when the
host allows (:meth:`sea.telemetry.Telemetry.persona_label`).
"""

from __future__ import annotations

from typing import Any

from opentelemetry.metrics import Meter, NoOpMeter

_SECONDS = "s"


class Meters:
    """The instruments, made once per runtime.

    Args:
        meter: Where they are made.
    """

    def __init__(self, meter: Meter) -> None:
        self.noop = isinstance(meter, NoOpMeter)
        """The meter records nothing (a no-op provider): the instruments are not used."""
        self.pulses = meter.create_counter(
            "sea.pulses", unit="{pulse}", description="Pulse drives that ended, by status")
        self.pulse_duration = meter.create_histogram(
            "sea.pulse.duration", unit=_SECONDS, description="How long a pulse drive took")
        self.node_duration = meter.create_histogram(
            "sea.node.duration", unit=_SECONDS, description="How long a node ran")
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit=_SECONDS,
            description="GenAI operation duration")
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}",
            description="Measures number of input and output tokens used")
        self.cost = meter.create_counter(
            "sea.model.cost", unit="{currency}", description="What model calls cost")
        self.errors = meter.create_counter(
            "sea.errors", unit="{error}", description="Failures, by code")
        self.approvals_waiting = meter.create_up_down_counter(
            "sea.approvals.waiting", unit="{pulse}",
            description="Pulses waiting for a person's answer (ended waiting minus resumed)")

    def pulse_ended(self, attrs: dict[str, Any], status: str, duration_s: float) -> None:
        """Count a drive that ended, and its duration."""
        labelled = {**attrs, "sea.pulse.status": status}
        self.pulses.add(1, labelled)
        self.pulse_duration.record(duration_s, labelled)
        if status == "waiting":
            self.approvals_waiting.add(1, attrs)

    def resumed(self, attrs: dict[str, Any]) -> None:
        """A waiting pulse was answered."""
        self.approvals_waiting.add(-1, attrs)

    def error(self, attrs: dict[str, Any], code: str) -> None:
        """Count a failure by its code."""
        self.errors.add(1, {**attrs, "error.type": code})


def model_call(meters: Meters, attrs: dict[str, Any], model: str, outcome: str,
               latency_s: float, tokens: tuple[int, int], cost: float) -> None:
    """Record one model call's duration (its count is the histogram's: the calls, by
    ``error.type``), tokens (input and output) and cost.

    Args:
        meters: The instruments.
        attrs: The pulse's attributes (persona, playbook).
        model: The model's name.
        outcome: ``ok``, ``error`` or ``cancelled``.
        latency_s: How long it took.
        tokens: Input and output tokens.
        cost: What it cost.
    """
    base = {**attrs, "gen_ai.operation.name": "chat", "gen_ai.request.model": model}
    timed = base if outcome == "ok" else {**base, "error.type": outcome}
    meters.operation_duration.record(max(0.0, latency_s), timed)
    for kind, count in zip(("input", "output"), tokens, strict=True):
        if count > 0:
            meters.tokens.record(count, {**base, "gen_ai.token.type": kind})
    if cost > 0:
        meters.cost.add(cost, base)
