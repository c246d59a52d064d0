"""The W3C trace context a pulse keeps (its origin's ``traceparent``) and reads back."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from sea.telemetry.context import span_context_of, traceparent


def _written_by_the_propagator(span: trace.Span) -> str | None:
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier, context=trace.set_span_in_context(span))
    return carrier.get("traceparent")


def test_a_spans_traceparent_is_the_one_the_w3c_propagator_writes() -> None:
    sampled = TracerProvider().get_tracer("t").start_span("sampled")
    unsampled = TracerProvider(sampler=ALWAYS_OFF).get_tracer("t").start_span("out")
    for span in (sampled, unsampled):
        header = traceparent(span)
        assert header is not None and header == _written_by_the_propagator(span)
        found = span_context_of(header)
        assert found is not None and found.trace_id == span.get_span_context().trace_id
        assert found.span_id == span.get_span_context().span_id
    flags = [int(str(traceparent(span))[-2:], 16) for span in (sampled, unsampled)]
    assert flags[0] & 1 == 1 and flags[1] & 1 == 0  # the sampled bit


def test_no_span_no_traceparent() -> None:
    assert traceparent(trace.INVALID_SPAN) is None
    assert traceparent() is None  # nothing current
