"""What a host says about its telemetry: which providers, and what may be recorded.

Nothing here imports OpenTelemetry: a :class:`Telemetry` is made cheaply by a host (or by
``--otel``), and the parts that speak OpenTelemetry (:mod:`sea.telemetry.spans`,
:mod:`sea.telemetry.meters`) are imported by its first pulse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from threading import Lock
from typing import TYPE_CHECKING, Any

from sea.errors import UsageError

if TYPE_CHECKING:
    from sea.telemetry.meters import Meters
    from sea.telemetry.spans import PulseTrace, Shapes

__all__ = ["Telemetry"]

OTHER_PERSONA = "_other"
"""The ``sea.persona`` of the metrics of personas past :attr:`Telemetry.max_personas`."""


class Telemetry:
    """How a runtime's pulses are traced and measured (OpenTelemetry).

    Args:
        tracer_provider: The host's tracer provider (default: the process's global one,
            ``opentelemetry.trace.get_tracer_provider()``).
        meter_provider: The host's meter provider (default: the global one).
        capture_content: Put prompts, answers, tool arguments and results in the spans.
            They are personal data: off by default, when spans carry only their sizes.
        persona_metrics: Give the metrics a ``sea.persona`` attribute.
        max_personas: The most personas the metrics name (bounded cardinality); the
            others are counted as ``_other``.
        on_shutdown: What :meth:`shutdown` calls (flushing the providers the runtime
            made, :func:`sea.telemetry.from_environment`).

    Raises:
        UsageError: ``max_personas`` is not a whole number >= 0.
    """

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        capture_content: bool = False,
        persona_metrics: bool = True,
        max_personas: int = 100,
        on_shutdown: Callable[[], None] | None = None,
    ) -> None:
        if isinstance(max_personas, bool) or not isinstance(max_personas, int) \
                or max_personas < 0:
            raise UsageError(f"max_personas must be a whole number >= 0, not {max_personas!r}")
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.capture_content = bool(capture_content)
        self.persona_metrics = bool(persona_metrics)
        self.max_personas = max_personas
        self._on_shutdown = on_shutdown
        self._lock = Lock()
        self._meters: Meters | None = None
        self._tracer: Any = None
        self._personas: set[str] = set()
        self._shapes: Shapes | None = None

    def pulse(self, pulse_id: str, mode: str, *,
              shapes: Mapping[str, str] | None = None) -> PulseTrace:
        """The trace of one drive of a pulse (its root span starts now, as a child of the
        current span, if any).

        Args:
            pulse_id: The pulse.
            mode: ``start``, ``resume`` or ``continue``.
            shapes: How node types are shown when not as a span each
                (:meth:`sea.engine.registry.Registry.span_shapes`): ``event`` (a span
                event of its playbook call's span), ``model`` or ``tool`` (the node's span
                is its one call's).

        Returns:
            What turns the drive's events into spans and metrics.
        """
        from sea.telemetry.spans import PulseTrace, Shapes

        tracer, meters = self._parts()
        known = self._shapes  # a runtime's registry gives the same shapes to every drive
        if known is None or known.given != (shapes or {}):
            known = self._shapes = Shapes(shapes or {})
        return PulseTrace(tracer, meters, pulse_id, mode, capture_content=self.capture_content,
                          persona_label=self.persona_label, shapes=known)

    @contextmanager
    def span(self, name: str, **attributes: str | int | float | bool) -> Iterator[Any]:
        """A span of the host's own, current within the block (a server's request): the
        pulses it runs, and those it submits to the queue, are its children.

        Args:
            name: The span's name (``POST /pulses``).
            attributes: Its attributes.

        Returns:
            The span (a context manager's value).
        """
        tracer, _ = self._parts()
        with tracer.start_as_current_span(name, attributes=attributes) as span:
            yield span

    def persona_label(self, persona: str) -> str | None:
        """The ``sea.persona`` of a metric: the persona, ``_other`` past the bound, or
        None when the host keeps personas out of the metrics."""
        if not self.persona_metrics:
            return None
        with self._lock:
            if persona in self._personas:
                return persona
            if len(self._personas) < self.max_personas:
                self._personas.add(persona)
                return persona
        return OTHER_PERSONA

    def shutdown(self) -> None:
        """Flush and close what the runtime's own providers hold (nothing for a host's)."""
        if self._on_shutdown is not None:
            self._on_shutdown()

    def _parts(self) -> tuple[Any, Meters]:
        with self._lock:
            if self._meters is None:
                from opentelemetry import metrics, trace

                from sea.telemetry.meters import Meters

                version = _version()
                tracers = self.tracer_provider or trace.get_tracer_provider()
                self._tracer = tracers.get_tracer("sea", version)
                meter_provider = self.meter_provider or metrics.get_meter_provider()
                self._meters = Meters(meter_provider.get_meter("sea", version))
            return self._tracer, self._meters


def _version() -> str | None:
    """SEA's version, the instrumentation scope's (None when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sea-runtime")
    except PackageNotFoundError:
        return None
