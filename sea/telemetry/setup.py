"""Telemetry made from the standard ``OTEL_*`` variables: what ``--otel`` switches on.

The OpenTelemetry SDK and its OTLP/HTTP exporters (the ``otel`` extra) read their own
variables: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (default ``http://localhost:4318``),
``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``... This
module reads the few that choose what is made: ``OTEL_SDK_DISABLED``,
``OTEL_TRACES_EXPORTER`` and ``OTEL_METRICS_EXPORTER`` (``otlp``, ``console`` or ``none``),
``OTEL_EXPORTER_OTLP_PROTOCOL`` (only ``http/protobuf``), and SEA's own
``SEA_OTEL_CAPTURE_CONTENT`` (prompts and answers in the spans). The server calls
:func:`from_environment` for its ``--otel`` as the run and worker commands do.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from sea.errors import UsageError
from sea.telemetry.options import Telemetry

MISSING_EXTRA = "SEA351"
"""``--otel`` without the ``otel`` extra (the OpenTelemetry SDK and OTLP exporter)."""
BAD_SETTING = "SEA352"
"""An ``OTEL_*`` variable names an exporter or protocol SEA cannot use."""

_EXPORTERS = ("otlp", "console", "none")


def from_environment(environ: Mapping[str, str], *, service_name: str = "sea") -> Telemetry | None:
    """The SDK's tracer and meter providers, exporting as the ``OTEL_*`` variables say.

    Args:
        environ: The process's environment (``os.environ``).
        service_name: ``service.name`` unless ``OTEL_SERVICE_NAME`` (or
            ``OTEL_RESOURCE_ATTRIBUTES``) names one.

    Returns:
        The runtime's telemetry (its :meth:`~Telemetry.shutdown` flushes what is left),
        or None when ``OTEL_SDK_DISABLED`` is true.

    Raises:
        UsageError: the ``otel`` extra is missing (SEA351); an exporter or protocol
            variable has a value SEA cannot use (SEA352).
    """
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    traces = _choice(environ, "OTEL_TRACES_EXPORTER")
    metrics = _choice(environ, "OTEL_METRICS_EXPORTER")
    protocol = environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf").strip()
    if "otlp" in (traces, metrics) and protocol != "http/protobuf":
        raise UsageError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: SEA exports over "
                         "OTLP/HTTP only (http/protobuf)", code=BAD_SETTING)
    try:
        from opentelemetry.sdk.resources import Resource
    except ImportError:
        raise UsageError("--otel needs the OpenTelemetry SDK: pip install "
                         "'sea-runtime[otel]'", code=MISSING_EXTRA) from None
    resource = Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME")
                                or service_name})
    tracer_provider = _tracer_provider(resource, traces, _endpoint(environ, "traces"))
    meter_provider = _meter_provider(resource, metrics, _endpoint(environ, "metrics"))

    def shutdown() -> None:
        tracer_provider.shutdown()
        meter_provider.shutdown()

    capture = environ.get("SEA_OTEL_CAPTURE_CONTENT", "").strip().lower() in ("1", "true")
    return Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider,
                     capture_content=capture, on_shutdown=shutdown)


def _choice(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name, "otlp").strip().lower() or "otlp"
    if value not in _EXPORTERS:
        raise UsageError(f"{name}={value!r}: SEA knows {', '.join(_EXPORTERS)}",
                         code=BAD_SETTING)
    return value


def _endpoint(environ: Mapping[str, str], signal: str) -> str | None:
    """Where a signal is sent: ``OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT`` as it is, else
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` with ``/v1/<signal>`` (None: the exporter's default,
    ``http://localhost:4318/v1/<signal>``)."""
    own = environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "").strip()
    if own:
        return own
    base = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return f"{base.rstrip('/')}/v1/{signal}" if base else None


def _tracer_provider(resource: Any, exporter: str, endpoint: str | None) -> Any:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    provider = TracerProvider(resource=resource)
    if exporter == "otlp":
        _otlp = _exporter("opentelemetry.exporter.otlp.proto.http.trace_exporter",
                          "OTLPSpanExporter")
        provider.add_span_processor(BatchSpanProcessor(_otlp(endpoint=endpoint)))
    elif exporter == "console":
        # the stdout of now: the exporter's default is the one of when the SDK was imported
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stdout)))
    return provider


def _meter_provider(resource: Any, exporter: str, endpoint: str | None) -> Any:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        PeriodicExportingMetricReader,
    )

    readers: list[Any] = []
    if exporter == "otlp":
        _otlp = _exporter("opentelemetry.exporter.otlp.proto.http.metric_exporter",
                          "OTLPMetricExporter")
        readers.append(PeriodicExportingMetricReader(_otlp(endpoint=endpoint)))
    elif exporter == "console":
        readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter(out=sys.stdout)))
    return MeterProvider(resource=resource, metric_readers=readers)


def _exporter(module: str, name: str) -> Callable[..., Any]:
    import importlib

    try:
        found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    except ImportError:
        raise UsageError("--otel needs the OTLP exporter: pip install 'sea-runtime[otel]'",
                         code=MISSING_EXTRA) from None
    return found
