"""Statistics over call records: every table of model calls adds up to the totals, failure
rates, retries, percentiles, the model table by kind and the tool table; and the table of a
pulse's calls that ``sea run`` prints."""

from __future__ import annotations

import pytest
from rich.console import Console

from saimemory.calls import CallRecord
from sea.cli._view import call_table
from sea.llm.records import LLMCallRecord
from sea.llm.stats import percentile, statistics


def model(node: str, pattern: str, name: str, **fields: object) -> CallRecord:
    return CallRecord("aoi", "model", name, fields.pop("outcome", "ok"),  # type: ignore[arg-type]
                      playbook="pb", node=node, pattern=pattern, **fields)  # type: ignore[arg-type]


RECORDS = [
    model("route", "base_main", "light", latency_s=0.1, tokens_in=100, tokens_out=10,
          cost=0.001, model_kind="light"),
    model("route", "base_main", "light", latency_s=0.3, tokens_in=120, tokens_out=12,
          retries=2, outcome="error", cost=0.002, model_kind="light"),
    model("speak", "base_main", "big", latency_s=1.0, tokens_in=300, tokens_out=90,
          cost=0.01, fallback=True, model_kind="normal"),
    model("plan", "base_main_specialized", "big", latency_s=2.0, tokens_in=500,
          tokens_out=200, cost=0.05, model_kind="normal"),
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
    assert {(r.key, r.model_kind): r.calls for r in found.by_model} == {
        ("light", "light"): 2, ("big", "normal"): 2}
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


def test_a_model_called_as_light_and_as_normal_has_a_row_for_each() -> None:
    both = [model("route", "base_main", "one", model_kind="light", tokens_in=5),
            model("speak", "base_main", "one", model_kind="normal", tokens_in=7),
            model("speak", "base_main", "one", model_kind="normal", tokens_in=9)]
    rows = statistics(both).to_json()["by_model"]
    assert [(r["key"], r["model_kind"], r["calls"], r["tokens_in"]) for r in rows] == [
        ("one", "normal", 2, 16), ("one", "light", 1, 5)]
    assert "model_kind" not in statistics(both).to_json()["by_node"][0]


def test_the_run_table_shows_each_call_s_pattern_model_kind_and_cost() -> None:
    def call(node: str, pattern: str, kind: str, cost: float) -> LLMCallRecord:
        return LLMCallRecord("pb", node, "gpt-4o-mini", [], "ok", 0.5, 100, 10, 0, "ok",
                             pattern=pattern, model_kind=kind, cost=cost)

    console = Console(record=True, width=200)
    console.print(call_table([call("route", "base_main", "light", 0.000125),
                              call("plan", "base_main_specialized", "normal", 0.0025)]))
    lines = [line.split() for line in console.export_text().splitlines() if line.strip()]
    assert lines[0] == ["node", "pattern", "model", "time", "in", "out", "cost", "retries",
                        "outcome"]
    assert lines[2] == ["pb.route", "base_main", "gpt-4o-mini", "(light)", "0.50s", "100", "10",
                        "0.000125", "0", "ok"]
    assert lines[3][:4] == ["pb.plan", "base_main_specialized", "gpt-4o-mini", "(normal)"]
    assert lines[-1] == ["total", "1.00s", "200", "20", "0.002625"]
