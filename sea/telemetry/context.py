"""W3C trace context as text: what crosses a process (a queue's job, a checkpoint).

A ``traceparent`` (``00-<trace id>-<span id>-<flags>``) names one span: a pulse's worker
continues the trace of the request that submitted it, and a resumed pulse links to the span
that waited for the answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

_PROPAGATOR = TraceContextTextMapPropagator()
_KEY = "traceparent"


def traceparent(span: trace.Span | None = None) -> str | None:
    """The W3C ``traceparent`` of ``span`` (default: the current one), None without one.

    Args:
        span: The span; default the current span of the running context.

    Returns:
        The header's value, or None when there is no valid span.
    """
    found = (span if span is not None else trace.get_current_span()).get_span_context()
    if not found.is_valid:
        return None
    # the W3C format, as the propagator writes it (without its context's round trip)
    return f"00-{found.trace_id:032x}-{found.span_id:016x}-{found.trace_flags & 0xff:02x}"


def context_of(header: str | None) -> otel_context.Context | None:
    """The context whose current span is the one ``header`` names (None: no such span).

    Args:
        header: A W3C ``traceparent`` (a malformed one is ignored, as the standard says).

    Returns:
        The context, or None.
    """
    if not header:
        return None
    found = _PROPAGATOR.extract({_KEY: header})
    if not trace.get_current_span(found).get_span_context().is_valid:
        return None
    return found


def span_context_of(header: str | None) -> trace.SpanContext | None:
    """The span context ``header`` names (for a link), or None."""
    found = context_of(header)
    return None if found is None else trace.get_current_span(found).get_span_context()


@contextmanager
def attached(header: str | None) -> Iterator[None]:
    """Within the block, the span ``header`` names is the current span: what starts there
    (a pulse's root span) is its child. Without a header, nothing changes.

    Args:
        header: A W3C ``traceparent``, or None.
    """
    found = context_of(header)
    if found is None:
        yield
        return
    token: Any = otel_context.attach(found)
    try:
        yield
    finally:
        otel_context.detach(token)
