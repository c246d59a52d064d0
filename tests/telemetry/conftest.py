"""An in-memory OpenTelemetry SDK per test: the spans a runtime's pulses made, read back."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra (OpenTelemetry SDK)")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from sea.telemetry import Telemetry
from tests.workers.conftest import queue_dsn as queue_dsn  # the queue tests' fixture


@dataclass
class Otel:
    """A tracer and meter provider of the test's own, and what they received."""

    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    def telemetry(self, **options: object) -> Telemetry:
        return Telemetry(tracer_provider=self.tracer_provider,
                         meter_provider=self.meter_provider, **options)  # type: ignore[arg-type]

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name.startswith(prefix)]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        assert parent.context is not None
        return [s for s in self.finished()
                if s.parent is not None and s.parent.span_id == parent.context.span_id]

    def metric_points(self) -> dict[str, list[object]]:
        found: dict[str, list[object]] = {}
        data = self.metrics.get_metrics_data()
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found.setdefault(metric.name, []).extend(metric.data.data_points)
        return found


@pytest.fixture
def otel() -> Iterator[Otel]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    metrics = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[metrics])
    yield Otel(spans, metrics, tracer_provider, meter_provider)
    tracer_provider.shutdown()
    meter_provider.shutdown()
