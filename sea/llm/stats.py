"""Statistics over stored call records (``sea stats``): per ``playbook.node``, per prompt
pattern and per model (and the kind it was called as: light, normal, fallback) for model
calls, and per tool for tool calls.

Each row counts calls, failures (outcome ``error``) and their rate, retries (rejected
answers asked again and rate-limited requests), fallbacks, latency p50 and p95 (nearest
rank), tokens in and out, cost, and the response cache's hits (calls answered from the
cache, without a model call), misses and the tokens its hits saved. The totals are those of
the model calls, so every table of model calls adds up to them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from saimemory.calls import CallRecord


@dataclass(frozen=True, slots=True)
class StatsRow:
    """The calls of one group (a node, a pattern, a model or a tool)."""

    key: str
    calls: int
    failures: int
    retries: int
    fallbacks: int
    latency_p50_s: float
    latency_p95_s: float
    tokens_in: int
    tokens_out: int
    cost: float
    model_kind: str | None = None
    """For a row of the model table: the kind the model was called as (``light``,
    ``normal`` or ``fallback``)."""
    cache_hits: int = 0
    """Calls answered from the response cache (no model call, no token spent)."""
    cache_misses: int = 0
    """Cacheable calls the cache had no answer for (the model was called)."""
    tokens_saved: int = 0
    """The tokens (in and out) the hits' cached calls had used."""

    @property
    def failure_rate(self) -> float:
        """Failures per call (0 when there were no calls)."""
        return self.failures / self.calls if self.calls else 0.0

    def to_json(self) -> dict[str, Any]:
        """The row as JSON (``failure_rate`` included; ``model_kind`` in the model table)."""
        kind = {} if self.model_kind is None else {"model_kind": self.model_kind}
        return {
            "key": self.key,
            **kind,
            "calls": self.calls,
            "failures": self.failures,
            "failure_rate": self.failure_rate,
            "retries": self.retries,
            "fallbacks": self.fallbacks,
            "latency_p50_s": self.latency_p50_s,
            "latency_p95_s": self.latency_p95_s,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost": self.cost,
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "tokens_saved": self.tokens_saved,
        }


@dataclass(frozen=True, slots=True)
class Statistics:
    """Every table, and the totals of the model calls."""

    total: StatsRow
    by_node: list[StatsRow]
    by_pattern: list[StatsRow]
    by_model: list[StatsRow]
    tools: list[StatsRow]

    def to_json(self) -> dict[str, Any]:
        """``{calls, failures, retries, tokens_in, tokens_out, cost, ...tables}``: the
        totals at the top level (the ``total`` row's JSON without its key), the tables
        beneath them."""
        totals = self.total.to_json()
        del totals["key"]
        return {
            **totals,
            "by_node": [row.to_json() for row in self.by_node],
            "by_pattern": [row.to_json() for row in self.by_pattern],
            "by_model": [row.to_json() for row in self.by_model],
            "tools": [row.to_json() for row in self.tools],
        }


_AGO = re.compile(r"(?P<count>\d{1,6})(?P<unit>[smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def since_moment(text: str, now: datetime) -> datetime:
    """The moment a statistics filter's ``since`` names: a time ago (``30m``, ``24h``,
    ``7d``; at most six digits) or an ISO 8601 time with a UTC offset.

    Raises:
        ValueError: neither; its message says what is wrong, to follow the value.
    """
    ago = _AGO.fullmatch(text.strip())
    if ago is not None:
        return now - timedelta(**{_UNITS[ago["unit"]]: int(ago["count"])})
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError("is neither a time ago (30m, 24h, 7d) nor an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise ValueError(f"needs a UTC offset, e.g. {text}+00:00")
    return moment


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (``share`` 0.5 is the median); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def summarize(key: str, records: Sequence[CallRecord], model_kind: str | None = None) -> StatsRow:
    """One row over ``records``."""
    latencies = [r.latency_s for r in records]
    return StatsRow(
        key=key,
        calls=len(records),
        failures=sum(1 for r in records if r.outcome == "error"),
        retries=sum(r.retries for r in records),
        fallbacks=sum(1 for r in records if r.fallback),
        latency_p50_s=percentile(latencies, 0.5),
        latency_p95_s=percentile(latencies, 0.95),
        tokens_in=sum(r.tokens_in for r in records),
        tokens_out=sum(r.tokens_out for r in records),
        cost=math.fsum(r.cost for r in records),
        model_kind=model_kind,
        cache_hits=sum(1 for r in records if r.cache == "hit"),
        cache_misses=sum(1 for r in records if r.cache == "miss"),
        tokens_saved=sum(r.tokens_saved for r in records),
    )


def table(records: Iterable[CallRecord], key: Callable[[CallRecord], str]) -> list[StatsRow]:
    """One row per key, most calls first (then by key)."""
    groups: dict[str, list[CallRecord]] = {}
    for record in records:
        groups.setdefault(key(record), []).append(record)
    rows = [summarize(name, group) for name, group in groups.items()]
    return sorted(rows, key=lambda row: (-row.calls, row.key))


def model_table(records: Iterable[CallRecord]) -> list[StatsRow]:
    """One row per model and the kind it was called as (a model that served as the light
    model and as the normal one has a row for each), most calls first."""
    groups: dict[tuple[str, str], list[CallRecord]] = {}
    for record in records:
        groups.setdefault((record.name, record.model_kind or "-"), []).append(record)
    rows = [summarize(name, group, kind) for (name, kind), group in groups.items()]
    return sorted(rows, key=lambda row: (-row.calls, row.key, row.model_kind or ""))


def node_key(record: CallRecord) -> str:
    """``playbook.node`` of a record (``-`` for a part it lacks)."""
    return f"{record.playbook or '-'}.{record.node or '-'}"


def statistics(records: Iterable[CallRecord]) -> Statistics:
    """Every table over ``records`` (model and tool calls mixed, as the store keeps them)."""
    every = list(records)
    models = [r for r in every if r.kind == "model"]
    tools = [r for r in every if r.kind == "tool"]
    return Statistics(
        total=summarize("total", models),
        by_node=table(models, node_key),
        by_pattern=table(models, lambda r: r.pattern or "-"),
        by_model=model_table(models),
        tools=table(tools, lambda r: r.name),
    )
