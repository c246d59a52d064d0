"""Advice from the call records (``sea stats --advise``): the nodes whose failures, retries,
cost or latency stand out, what would likely help, and the figures behind it; and the
response cache's hits, misses and tokens saved in the statistics."""

from __future__ import annotations

from rich.console import Console

from saimemory.calls import CallRecord
from sea.cli._view import call_table
from sea.llm.advice import MIN_CALLS, advise
from sea.llm.records import LLMCallRecord
from sea.llm.stats import statistics


def call(node: str, **fields: object) -> CallRecord:
    given: dict[str, object] = {"pattern": "base_main", "model_kind": "normal",
                                "latency_s": 0.1, "tokens_in": 100, "tokens_out": 20}
    given.update(fields)
    name = str(given.pop("name", "big"))
    outcome = given.pop("outcome", "ok")
    return CallRecord("aoi", "model", name, outcome, playbook="pb", node=node,  # type: ignore[arg-type]
                      **given)  # type: ignore[arg-type]


def calm(node: str, count: int = 4, **fields: object) -> list[CallRecord]:
    return [call(node, **fields) for _ in range(count)]


def test_failing_nodes_stand_out_with_their_most_common_error() -> None:
    records = [*calm("plan", 2), call("plan", outcome="error", error="timeout after 30s"),
               call("plan", outcome="error", error="timeout after 30s"),
               call("plan", outcome="error", error="connection reset"), *calm("speak")]
    (advice,) = advise(records)
    assert (advice.node, advice.issue) == ("pb.plan", "failures")
    assert advice.figures == {"calls": 5, "failures": 3, "failure_rate": 0.6, "fallbacks": 0,
                              "most_common_error": "timeout after 30s", "times": 2}
    assert "3 of 5 calls failed (60%)" in advice.finding
    assert "fallback model" in advice.suggestion and "error_next" in advice.suggestion
    assert advice.to_json()["figures"]["failures"] == 3


def test_retried_nodes_are_told_of_a_method_that_works_the_first_time() -> None:
    records = [*calm("route", retries=2, name="small"), *calm("speak", name="small"),
               *calm("other")]
    (advice,) = advise(records)
    assert (advice.node, advice.issue) == ("pb.route", "retries")
    assert advice.figures["retries_per_call"] == 2.0
    assert (advice.figures["other_nodes_first_try"], advice.figures["other_nodes_calls"]) == (
        4, 4)
    assert "structured-output method" in advice.suggestion
    assert "first try in 4 of 4 calls" in advice.suggestion


def test_a_costly_node_on_the_normal_model_is_told_of_the_light_one() -> None:
    light = calm("route", model_kind="light", name="small", cost=0.0001)
    records = [*calm("plan", tokens_in=5000, tokens_out=500, cost=0.05), *light]
    (advice,) = advise(records)
    assert (advice.node, advice.issue) == ("pb.plan", "cost")
    assert advice.figures["share"] > 0.99 and advice.figures["light_failure_rate"] == 0.0
    assert advice.suggestion.startswith("the light model")


def test_the_light_model_is_not_advised_where_it_fails_more_often() -> None:
    light = [*calm("route", model_kind="light", name="small"),
             *[call("route", model_kind="light", name="small", outcome="error", error="bad")
               for _ in range(2)]]
    records = [*calm("plan", tokens_in=5000, tokens_out=100), *light]
    costly = [a for a in advise(records) if a.issue == "cost"]
    assert [a.node for a in costly] == ["pb.plan"]
    assert costly[0].suggestion.startswith("a shorter history")
    assert costly[0].figures["tokens_in_per_call"] == 5000


def test_a_slow_node_stands_out_against_every_call() -> None:
    records = [*calm("plan", latency_s=3.0, pattern="base_specialized"), *calm("speak"),
               *calm("route")]
    (advice,) = advise(records)
    assert (advice.node, advice.issue) == ("pb.plan", "latency")
    assert advice.figures["latency_p50_s"] == 3.0 and advice.figures["all_calls_p50_s"] == 0.1
    assert "response cache" in advice.suggestion


def test_nothing_stands_out_in_calm_or_scarce_records() -> None:
    assert advise([*calm("speak"), *calm("route")]) == []
    few = [call("plan", outcome="error", error="x") for _ in range(MIN_CALLS - 1)]
    assert advise([*few, *calm("speak")]) == []
    assert advise([]) == []


def test_the_statistics_count_cache_hits_misses_and_tokens_saved() -> None:
    records = [call("speak", cache="miss"), call("speak", cache="hit", tokens_in=0,
                                                 tokens_out=0, tokens_saved=120),
               call("route")]
    found = statistics(records)
    total = found.total
    assert (total.cache_hits, total.cache_misses, total.tokens_saved) == (1, 1, 120)
    speak = next(r for r in found.by_node if r.key == "pb.speak")
    assert speak.to_json()["cache_hits"] == 1 and speak.to_json()["tokens_saved"] == 120
    assert found.to_json()["cache_misses"] == 1


def test_the_run_table_says_which_answers_came_from_the_cache() -> None:
    def answered(node: str, cache: str | None) -> LLMCallRecord:
        return LLMCallRecord("pb", node, "scripted", [], "ok", 0.1, 0, 0, 0, "ok",
                             cache=cache)  # type: ignore[arg-type]

    console = Console(record=True, width=200)
    console.print(call_table([answered("route", "hit"), answered("speak", "miss")]))
    lines = [line.split() for line in console.export_text().splitlines() if line.strip()]
    assert lines[2][-3:] == ["ok", "(cache", "hit)"] and lines[3][-1] == "ok"
