"""Advice from the call records (``sea stats --advise``): the nodes whose failures, retries,
cost or latency stand out, and what would likely help, each with the figures behind it.

A node is judged on its model calls once it has :data:`MIN_CALLS` of them:

- **failures**: at least :data:`FAILURE_RATE` of its calls failed. A fallback model (when
  none answered for it yet) and an ``error_next`` route help.
- **retries**: its answers were asked again :data:`RETRY_RATE` times a call or more
  (rejected structured answers, rate limits). A structured-output method that works on the
  first try helps (the one the model's other nodes needed no retry with), or a simpler
  schema.
- **cost**: a call of it costs :data:`COST_RATIO` times what a call of the other nodes
  costs (the median node's) or more (its tokens, when nothing cost anything).
- **latency**: its median latency is :data:`LATENCY_RATIO` times the median of every model
  call or more, and :data:`LATENCY_GAP_S` longer at least, among several nodes.

For cost and latency, the likely help is, in order: the light model, when the node calls
the normal one and the light model's calls fail no more often than the node's; a shorter
history, when the node's context holds Main and its input is most of its tokens; else the
response cache, for a deterministic node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from saimemory.calls import CallRecord
from sea.llm.stats import StatsRow, node_key, percentile, summarize

Issue = Literal["failures", "retries", "cost", "latency"]

MIN_CALLS = 3
"""The fewest model calls of a node that are judged."""
FAILURE_RATE = 0.2
"""A node whose calls fail this often (or more) stands out."""
RETRY_RATE = 0.5
"""A node whose answers are asked again this many times a call (or more) stands out."""
COST_RATIO = 3.0
"""A node whose calls cost this many times the other nodes' (per call, the median node's)
stands out."""
LATENCY_RATIO = 2.0
"""A node whose median latency is this many times every call's median stands out."""
LATENCY_GAP_S = 0.5
"""How much longer (seconds) a node's median latency must be than every call's to stand
out (a few milliseconds twice over is no finding)."""
INPUT_SHARE = 0.8
"""A node whose input is this share of its tokens (or more) would gain from less history."""
MAIN_PATTERNS = frozenset({"base_main", "base_main_specialized"})
"""The prompt patterns whose context holds Main (the history)."""


@dataclass(frozen=True, slots=True)
class Advice:
    """One node that stands out, and what would likely help.

    Attributes:
        node: ``playbook.node``.
        issue: ``failures``, ``retries``, ``cost`` or ``latency``.
        finding: What stands out, in words, with its figures.
        suggestion: What would likely help.
        figures: The figures behind it, by name.
    """

    node: str
    issue: Issue
    finding: str
    suggestion: str
    figures: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"node", "issue", "finding", "suggestion", "figures"}``."""
        return {"node": self.node, "issue": self.issue, "finding": self.finding,
                "suggestion": self.suggestion, "figures": dict(self.figures)}


@dataclass(frozen=True, slots=True)
class _Node:
    key: str
    row: StatsRow
    records: list[CallRecord]

    @property
    def kind(self) -> str:
        kinds = Counter(r.model_kind or "-" for r in self.records)
        return kinds.most_common(1)[0][0]

    @property
    def pattern(self) -> str:
        return Counter(r.pattern or "-" for r in self.records).most_common(1)[0][0]


def advise(records: Iterable[CallRecord]) -> list[Advice]:
    """The advice over ``records`` (model and tool calls mixed; the model calls count):
    failures first, then retries, cost and latency; per issue, the node with most calls
    first."""
    models = [r for r in records if r.kind == "model"]
    groups: dict[str, list[CallRecord]] = {}
    for record in models:
        groups.setdefault(node_key(record), []).append(record)
    nodes = [_Node(key, summarize(key, group), group) for key, group in groups.items()]
    nodes.sort(key=lambda n: (-n.row.calls, n.key))
    judged = [n for n in nodes if n.row.calls >= MIN_CALLS]
    total = summarize("total", models)
    light = [r for r in models if r.model_kind == "light"]
    found: list[Advice] = []
    found += [a for n in judged if (a := _failures(n)) is not None]
    found += [a for n in judged if (a := _retries(n, models)) is not None]
    if len(nodes) > 1:
        found += [a for n in judged if (a := _cost(n, nodes, total, light)) is not None]
        found += [a for n in judged if (a := _latency(n, total, light)) is not None]
    return found


def _failures(node: _Node) -> Advice | None:
    row = node.row
    if row.failures < 2 or row.failure_rate < FAILURE_RATE:
        return None
    errors = Counter((r.error or "").splitlines()[0][:120] for r in node.records
                     if r.outcome == "error")
    common, seen = errors.most_common(1)[0]
    figures = {"calls": row.calls, "failures": row.failures,
               "failure_rate": round(row.failure_rate, 3), "fallbacks": row.fallbacks,
               "most_common_error": common, "times": seen}
    if row.fallbacks:
        help_ = (f"its fallback model answered {row.fallbacks} time(s): check the first "
                 "model (its provider, its limits), and route the rest with error_next")
    else:
        help_ = ("give the ModelSet a fallback model (ModelSet.fallbacks) and the node an "
                 "error_next route")
    return Advice(node.key, "failures",
                  f"{row.failures} of {row.calls} calls failed ({row.failure_rate:.0%}); "
                  f"most often: {common or 'no message'} ({seen}x)", help_, figures)


def _retries(node: _Node, models: Sequence[CallRecord]) -> Advice | None:
    row = node.row
    rate = row.retries / row.calls
    if rate < RETRY_RATE:
        return None
    names = {r.name for r in node.records}
    others = [r for r in models if r.name in names and node_key(r) != node.key]
    clean = [r for r in others if r.retries == 0 and r.outcome == "ok"]
    figures: dict[str, Any] = {"calls": row.calls, "retries": row.retries,
                               "retries_per_call": round(rate, 3),
                               "other_nodes_first_try": len(clean),
                               "other_nodes_calls": len(others)}
    help_ = ("a structured-output method that works on the first try with this model "
             "(--structured-method, or ModelSet(structured=MethodMemory(METHOD)): the one the "
             "model supports natively), or a simpler response_schema")
    if others:
        help_ += (f"; the same model answered other nodes on the first try in {len(clean)} "
                  f"of {len(others)} calls")
    return Advice(node.key, "retries",
                  f"{row.retries} retries in {row.calls} calls ({rate:.2f} a call)", help_,
                  figures)


def _cost(node: _Node, nodes: Sequence[_Node], total: StatsRow,
          light: Sequence[CallRecord]) -> Advice | None:
    priced = total.cost > 0

    def per_call(row: StatsRow) -> float:
        spent = row.cost if priced else row.tokens_in + row.tokens_out
        return spent / row.calls

    row = node.row
    others = [per_call(n.row) for n in nodes if n.key != node.key]
    typical = percentile(others, 0.5)
    mine = per_call(row)
    if not others or mine <= 0 or mine < COST_RATIO * typical:
        return None
    unit = "cost" if priced else "tokens"
    spent = total.cost if priced else total.tokens_in + total.tokens_out
    share = (row.cost if priced else row.tokens_in + row.tokens_out) / spent
    figures = {"calls": row.calls, f"{unit}_per_call": round(mine, 6),
               f"other_nodes_{unit}_per_call": round(typical, 6), "share": round(share, 3),
               "cost": row.cost, "tokens_in": row.tokens_in, "tokens_out": row.tokens_out}
    ratio = "" if typical <= 0 else f", {mine / typical:.1f}x the other nodes'"
    spends = f"costs {mine:.6g}" if priced else f"uses {mine:.0f} tokens"
    return Advice(node.key, "cost", f"a call {spends}{ratio} ({share:.0%} of all)",
                  _lighter(node, light, figures), figures)


def _latency(node: _Node, total: StatsRow, light: Sequence[CallRecord]) -> Advice | None:
    row = node.row
    overall = total.latency_p50_s
    if (overall <= 0 or row.latency_p50_s < LATENCY_RATIO * overall
            or row.latency_p50_s - overall < LATENCY_GAP_S):
        return None
    ratio = row.latency_p50_s / overall
    figures = {"calls": row.calls, "latency_p50_s": row.latency_p50_s,
               "latency_p95_s": row.latency_p95_s, "all_calls_p50_s": overall,
               "ratio": round(ratio, 2)}
    return Advice(node.key, "latency",
                  f"median latency {row.latency_p50_s:.2f}s, {ratio:.1f}x every call's "
                  f"{overall:.2f}s", _lighter(node, light, figures), figures)


def _lighter(node: _Node, light: Sequence[CallRecord], figures: dict[str, Any]) -> str:
    """What would likely make the node cheaper or faster (adds its figures)."""
    row = node.row
    if node.kind == "normal" and len(light) >= MIN_CALLS:
        light_rate = sum(1 for r in light if r.outcome == "error") / len(light)
        if light_rate <= row.failure_rate:
            figures.update(light_calls=len(light), light_failure_rate=round(light_rate, 3),
                           failure_rate=round(row.failure_rate, 3),
                           light_latency_p50_s=percentile([r.latency_s for r in light], 0.5))
            return (f"the light model (context_profile worker_light or router, or model_type "
                    f"lightweight): its calls fail {light_rate:.0%} of the time, this node's "
                    f"{row.failure_rate:.0%}")
    spent = row.tokens_in + row.tokens_out
    if node.pattern in MAIN_PATTERNS and spent and row.tokens_in / spent >= INPUT_SHARE:
        figures.update(tokens_in_per_call=row.tokens_in // row.calls,
                       input_share=round(row.tokens_in / spent, 3))
        return (f"a shorter history (RuntimeConfig.history_budget, or a token budget: "
                f"LLMOptions.history_tokens): {row.tokens_in // row.calls} tokens in a call, "
                f"{row.tokens_in / spent:.0%} of its tokens are input")
    return ("the response cache (LLMOptions.response_cache, --response-cache) if its model "
            "is deterministic, or a smaller prompt")
