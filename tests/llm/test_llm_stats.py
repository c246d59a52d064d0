"""Statistics over call records: every table of model calls adds up to the totals, failure
rates, retries, percentiles and the tool table."""

from __future__ import annotations

import pytest

from saimemory.calls import CallRecord
from sea.llm.stats import percentile, statistics


def model(node: str, pattern: str, name: str, **fields: object) -> CallRecord:
    return CallRecord("aoi", "model", name, fields.pop("outcome", "ok"),  # type: ignore[arg-type]
                      playbook="pb", node=node, pattern=pattern, **fields)  # type: ignore[arg-type]


RECORDS = [
    model("route", "base_main", "light", latency_s=0.1, tokens_in=100, tokens_out=10,
          cost=0.001),
    model("route", "base_main", "light", latency_s=0.3, tokens_in=120, tokens_out=12,
          retries=2, outcome="error", cost=0.002),
    model("speak", "base_main", "big", latency_s=1.0, tokens_in=300, tokens_out=90,
          cost=0.01, fallback=True),
    model("plan", "base_main_specialized", "big", latency_s=2.0, tokens_in=500,
          tokens_out=200, cost=0.05),
    CallRecord("aoi", "tool", "memory_search", "ok", playbook="pb", node="find",
               latency_s=0.02),
    CallRecord("aoi", "tool", "memory_search", "error", playbook="pb", node="find",
               latency_s=0.04, error="boom"),
]


def test_every_table_adds_up_to_the_totals() -> None:
    found = statistics(RECORDS)
    total = found.total
    assert (total.calls, total.failures, total.retries, total.fallbacks) == (4, 1, 2, 1)
    assert (total.tokens_in, total.tokens_out) == (1020, 312)
    assert total.cost == pytest.approx(0.063)
    for rows in (found.by_node, found.by_pattern, found.by_model):
        assert sum(r.calls for r in rows) == total.calls
        assert sum(r.failures for r in rows) == total.failures
        assert sum(r.tokens_in for r in rows) == total.tokens_in
        assert sum(r.tokens_out for r in rows) == total.tokens_out
        assert sum(r.cost for r in rows) == pytest.approx(total.cost)
    route = found.by_node[0]
    assert (route.key, route.calls, route.failure_rate, route.retries) == ("pb.route", 2, 0.5, 2)
    assert [r.key for r in found.by_pattern] == ["base_main", "base_main_specialized"]
    assert {r.key: r.calls for r in found.by_model} == {"light": 2, "big": 2}
    (tool,) = found.tools
    assert (tool.key, tool.calls, tool.failures, tool.latency_p95_s) == (
        "memory_search", 2, 1, 0.04)


def test_json_puts_the_totals_on_top_and_the_tables_beneath() -> None:
    data = statistics(RECORDS).to_json()
    assert {"calls", "failures", "retries", "tokens_in", "tokens_out", "cost"} <= set(data)
    assert data["calls"] == 4 and data["failures"] == 1
    assert {"by_node", "by_pattern", "by_model", "tools"} <= set(data)
    assert data["by_node"][0]["failure_rate"] == 0.5


def test_nearest_rank_percentiles() -> None:
    values = [float(v) for v in range(1, 21)]
    assert percentile(values, 0.5) == 10.0 and percentile(values, 0.95) == 19.0
    assert percentile([3.0], 0.95) == 3.0 and percentile([], 0.5) == 0.0


def test_no_records_no_rows() -> None:
    found = statistics([])
    assert found.total.calls == 0 and found.by_node == [] and found.tools == []
