"""The OpenTelemetry SDK's own cost for a pulse's telemetry, for ``bench_pulse.py --otel``:
the side ``SDK alone`` runs an untraced pulse, then makes, straight through the SDK, the
spans (with their attributes and events) and the metric points that one traced pulse of
the same playbook made. No part of SEA's telemetry runs: what this side costs over
``untraced`` is the least that any code making the same trace and metrics with the SDK
would cost, the floor under ``otel on``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from sea.telemetry import Telemetry
from sea.telemetry.meters import Meters

_INSTRUMENTS = ("pulse_duration", "node_duration", "operation_duration", "tokens", "cost",
                "errors", "approvals_waiting")
Point = tuple[str, str, float, dict[str, Any]]
"""An instrument's name in :class:`Meters`, ``record`` or ``add``, the value, attributes."""


class _Logged:
    """An instrument that notes each measurement, then hands it on."""

    def __init__(self, name: str, inner: Any, log: list[Point]) -> None:
        self._name, self._inner, self._log = name, inner, log

    def record(self, amount: float, attributes: Any = None, context: Any = None) -> None:
        self._log.append((self._name, "record", amount, dict(attributes or {})))
        self._inner.record(amount, attributes, context=context)

    def add(self, amount: float, attributes: Any = None, context: Any = None) -> None:
        self._log.append((self._name, "add", amount, dict(attributes or {})))
        self._inner.add(amount, attributes, context=context)


class Floor:
    """One traced pulse's spans and metric points, made again by the SDK on demand.

    Args:
        exporter: Where the spans go (a batch processor's, as ``otel on``'s).
    """

    def __init__(self, exporter: SpanExporter) -> None:
        self.spans: list[ReadableSpan] = []
        self.points: list[Point] = []
        tracers = TracerProvider()
        tracers.add_span_processor(BatchSpanProcessor(exporter))
        self._tracers = tracers
        self._tracer = tracers.get_tracer("sea")
        self._meters = Meters(MeterProvider(metric_readers=[InMemoryMetricReader()])
                              .get_meter("sea"))

    async def learn(self, make_runtime: Callable[[Telemetry | None, Path], Any],
                    pulse: Callable[[Any, int], Awaitable[Any]], workdir: Path) -> None:
        """Run two pulses traced (the first to warm up) and keep what the second made."""
        exporter = InMemorySpanExporter()
        tracers = TracerProvider()
        tracers.add_span_processor(SimpleSpanProcessor(exporter))
        telemetry = Telemetry(tracer_provider=tracers,
                              meter_provider=MeterProvider(metric_readers=[]))
        _, meters = telemetry._parts()  # a bench: the runtime's own instruments, logged
        for name in _INSTRUMENTS:
            setattr(meters, name, _Logged(name, getattr(meters, name), self.points))
        workdir.mkdir()
        runtime = make_runtime(telemetry, workdir)
        await pulse(runtime, 0)
        exporter.clear()
        self.points.clear()
        await pulse(runtime, 1)
        self.spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
        await runtime.aclose()
        runtime.close()

    def make(self) -> None:
        """Make the pulse's spans (started in the order they started, children ended
        before their parents) and metric points."""
        contexts: dict[int, Any] = {}
        opened = []
        for span in self.spans:
            parent = contexts.get(span.parent.span_id) if span.parent is not None else None
            made = self._tracer.start_span(span.name, parent, span.kind,
                                           attributes=dict(span.attributes or {}))
            for event in span.events:
                made.add_event(event.name, dict(event.attributes or {}))
            assert span.context is not None
            contexts[span.context.span_id] = trace.set_span_in_context(made)
            opened.append(made)
        for made in reversed(opened):
            made.end()
        for name, method, amount, attributes in self.points:
            getattr(getattr(self._meters, name), method)(amount, attributes)

    def flush(self) -> None:
        """Hand the batch processor's spans to the exporter."""
        self._tracers.force_flush()
