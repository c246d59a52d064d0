"""The server's Prometheus metrics, served at ``/metrics`` (``prometheus-client``).

Every figure comes from what passes through the server anyway: a run's event log (each
entry a pulse appends, and the hub's own ``end``) through :class:`MeteredLog`, and each
HTTP request through :mod:`sea.serve.ops`. The metrics live in a registry of their own (one
per server, none global), so two apps in one process (tests) never share counts.

=======================================  ========================================================
metric                                   what
=======================================  ========================================================
``sea_pulses_total{status}``             runs ended, by SEA's status (ok, waiting, error,
                                         cancelled)
``sea_pulse_duration_seconds``           a pulse's duration (its ``pulse_end``), histogram
``sea_model_calls_total{model,outcome}`` model calls
``sea_model_tokens_total{model,kind}``   tokens (``input``, ``output``)
``sea_model_cost_total{model}``          what the calls cost (the price table's unit)
``sea_runs_active``                      runs under way in this process
``sea_queue_depth``                      runs accepted and waiting for their persona's turn
``sea_open_streams``                     SSE responses open now
``sea_http_requests_total``              requests, by method, route template and status
``sea_http_request_duration_seconds``    request durations (a stream: until it ends)
``sea_draining``                         1 while a SIGTERM drain is under way
=======================================  ========================================================
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from sea.serve.eventlog import Batch, EventLog

PULSE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
                   30, 60)


class ServerMetrics:
    """The server's metrics, in a registry of their own."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.pulses = Counter("sea_pulses", "Runs ended, by SEA's pulse status.", ["status"],
                              registry=r)
        self.pulse_seconds = Histogram("sea_pulse_duration_seconds", "Pulse durations.",
                                       buckets=PULSE_BUCKETS, registry=r)
        self.model_calls = Counter("sea_model_calls", "Model calls.", ["model", "outcome"],
                                   registry=r)
        self.tokens = Counter("sea_model_tokens", "Model tokens (input, output).",
                              ["model", "kind"], registry=r)
        self.cost = Counter("sea_model_cost", "What model calls cost (the price table's "
                            "unit).", ["model"], registry=r)
        self.runs_active = Gauge("sea_runs_active", "Runs under way in this process.",
                                 registry=r)
        self.queue_depth = Gauge("sea_queue_depth", "Runs waiting for their persona's turn.",
                                 registry=r)
        self.open_streams = Gauge("sea_open_streams", "SSE responses open now.", registry=r)
        self.requests = Counter("sea_http_requests", "HTTP requests.",
                                ["method", "route", "status"], registry=r)
        self.request_seconds = Histogram("sea_http_request_duration_seconds",
                                         "HTTP request durations (a stream: until it ends).",
                                         ["method", "route"], buckets=REQUEST_BUCKETS,
                                         registry=r)
        self.draining = Gauge("sea_draining", "1 while the server drains (SIGTERM).",
                              registry=r)
        self._waiting: set[str] = set()
        self._open: set[str] = set()

    def render(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)

    # -- runs -----------------------------------------------------------------------------

    def run_opened(self, run_id: str) -> None:
        """A run was accepted: it waits for its persona's turn until its pulse starts."""
        self._open.add(run_id)
        self._waiting.add(run_id)
        self._set_runs()

    def run_closed(self, run_id: str) -> None:
        """A run's log was closed: it is over."""
        self._open.discard(run_id)
        self._waiting.discard(run_id)
        self._set_runs()

    def observe(self, run_id: str, kind: str, data: Any) -> None:
        """Count one entry of a run's log."""
        if kind == "pulse_start":
            self._waiting.discard(run_id)
            self._set_runs()
        elif kind == "llm_call":
            self._model_call(data.get("record") or {})
        elif kind == "pulse_end":
            self.pulse_seconds.observe(float(data.get("duration_s") or 0.0))
        elif kind == "end":
            self.pulses.labels(str(data.get("status"))).inc()

    def _model_call(self, record: dict[str, Any]) -> None:
        model = str(record.get("model") or "?")
        self.model_calls.labels(model, str(record.get("outcome") or "?")).inc()
        self.tokens.labels(model, "input").inc(max(int(record.get("tokens_in") or 0), 0))
        self.tokens.labels(model, "output").inc(max(int(record.get("tokens_out") or 0), 0))
        self.cost.labels(model).inc(max(float(record.get("cost") or 0.0), 0.0))

    def _set_runs(self) -> None:
        self.runs_active.set(len(self._open))
        self.queue_depth.set(len(self._waiting))


class MeteredLog:
    """An :class:`~sea.serve.eventlog.EventLog` that counts what is appended to it.

    Args:
        log: The log it writes to.
        metrics: What it counts into.
    """

    def __init__(self, log: EventLog, metrics: ServerMetrics) -> None:
        self.inner = log
        self.metrics = metrics

    async def open(self, run_id: str) -> None:
        """Start the empty log of a new run."""
        await self.inner.open(run_id)
        self.metrics.run_opened(run_id)

    async def append(self, run_id: str, kind: str, data: Any) -> int:
        """Append one event; its sequence number."""
        seq = await self.inner.append(run_id, kind, data)
        self.metrics.observe(run_id, kind, data)
        return seq

    async def close(self, run_id: str) -> None:
        """No more events will come for ``run_id``."""
        await self.inner.close(run_id)
        self.metrics.run_closed(run_id)

    async def read(self, run_id: str, after: int, wait_s: float) -> Batch:
        """The entries after ``after`` (see :meth:`EventLog.read`)."""
        return await self.inner.read(run_id, after, wait_s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # the backend's own extras (sizes, ...)
