"""The cost of tracing a pulse (issue 39), for ``bench_pulse.py --otel``: the same pulses
of the engine as a host gets it, alternated over three runtimes on the same kind of store
and model.

* ``untraced``: no telemetry (``RuntimeConfig(telemetry=None)``, the default): no part of
  OpenTelemetry is imported or run.
* ``otel off``: telemetry given, on OpenTelemetry's no-op providers (what a host gets when
  it asks for telemetry and configures no SDK): the events are still turned into spans
  and metrics, which go nowhere.
* ``otel on``: the SDK, every span kept (``ALWAYS_ON``) and handed to a batch processor
  whose exporter drops them (the export itself is the receiver's cost, not the pulse's),
  the metrics aggregated by an in-memory reader.
* ``SDK alone``: an untraced pulse, then the spans and metric points of one ``otel on``
  pulse made again straight through the SDK, as ``otel on``'s are kept (:mod:`otel_floor`):
  the SDK's own cost, under any code that makes them.

Each row says the median / p90 wall time and the engine's time (wall minus the scripted
model's), and the median's cost against ``untraced``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from figures import median_p90  # run as a script from bench/
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import NoOpTracerProvider
from otel_floor import Floor

from sea.telemetry import Telemetry

SIDES = ("untraced", "otel off", "otel on", "SDK alone")


class _Dropped(SpanExporter):
    """An exporter that counts the spans and keeps none."""

    def __init__(self) -> None:
        self.count = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.count += len(spans)
        return SpanExportResult.SUCCESS


def telemetries() -> tuple[list[Telemetry | None], Callable[[], int]]:
    """The telemetry of the sides but the last (``SDK alone`` runs untraced), and how many
    spans the traced side made (after a flush)."""
    dropped = _Dropped()
    tracers = TracerProvider()
    tracers.add_span_processor(BatchSpanProcessor(dropped))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    off = Telemetry(tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider())
    on = Telemetry(tracer_provider=tracers, meter_provider=meters)

    def spans() -> int:
        tracers.force_flush()
        return dropped.count

    return [None, off, on], spans


async def compare(make_runtime: Callable[[Telemetry | None, Path], Any],
                  pulse: Callable[[Any, int], Any], model_spent: Callable[[Any], float],
                  workdir: Path, count: int, warm: int = 8) -> dict[str, tuple[list[float],
                                                                             list[float]]]:
    """Alternate ``count`` pulses over the sides (after ``warm`` unmeasured ones),
    in turn starting each round with another side.

    Args:
        make_runtime: A runtime (and its model) for a telemetry, in its own directory.
        pulse: Runs pulse ``i`` on a runtime and checks its route.
        model_spent: The seconds the runtime's model spent so far.
        workdir: Where each side's files go.
        count: Measured pulses per side.
        warm: Pulses run first on each side, not measured.

    Returns:
        Each side's wall and engine seconds per pulse.
    """
    sides, spans = telemetries()
    floor = Floor(_Dropped())
    await floor.learn(make_runtime, pulse, workdir / "learn")
    runtimes = []
    for name, telemetry in zip(SIDES, [*sides, None], strict=True):
        (workdir / name).mkdir()
        runtimes.append(make_runtime(telemetry, workdir / name))
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in SIDES}
    pairs = list(zip(SIDES, runtimes, strict=True))
    for i in range(count + warm):
        turn = i % len(SIDES)  # each side first in its turn: no side always after another
        for name, runtime in pairs[turn:] + pairs[:turn]:
            spent, started = model_spent(runtime), time.perf_counter()
            await pulse(runtime, i)
            if name == "SDK alone":
                floor.make()
            wall = time.perf_counter() - started
            if i >= warm:
                times[name][0].append(wall)
                times[name][1].append(wall - (model_spent(runtime) - spent))
    for runtime in runtimes:
        await runtime.aclose()
        runtime.close()
    assert spans() > 0, "the traced side made no spans"
    floor.flush()
    return times


def report(playbook: str, times: dict[str, tuple[list[float], list[float]]]) -> None:
    """Print one row per side: wall and engine time, and the cost against ``untraced``."""
    base_wall = statistics.median(times["untraced"][0])
    for name in SIDES:
        wall, engine = times[name]
        cost = (statistics.median(wall) - base_wall) / base_wall * 100
        print(f"{playbook:<13} {name:<9} {_ms(wall):>15} {_ms(engine):>15}  {cost:+6.1f}%",
              flush=True)


def _ms(values: list[float]) -> str:
    median, slow = median_p90(values)
    return f"{median * 1e3:6.1f} / {slow * 1e3:6.1f}"
