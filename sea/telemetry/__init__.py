"""OpenTelemetry for pulses: every pulse a trace, its numbers metrics (issue 39).

A host switches it on by giving its runtime a :class:`Telemetry`
(``RuntimeConfig(..., telemetry=Telemetry())``: the process's global providers, or the
host's own); the command line does it with ``--otel`` (:func:`from_environment`: the SDK
with an OTLP exporter, set by the standard ``OTEL_*`` variables; the ``otel`` extra). The
spans and metrics are made from the pulse's events (:mod:`sea.engine.events`): the engine
knows nothing of them, and a runtime without telemetry imports no part of OpenTelemetry.
"""

from __future__ import annotations

from sea.telemetry.options import Telemetry
from sea.telemetry.setup import from_environment

__all__ = ["Telemetry", "from_environment"]
