"""``sea stats``: statistics over the model and tool calls kept in SAIMemory.

Every pulse's calls are stored when it ends (``call_records``). The tables show, per
``playbook.node``, per prompt pattern and per model (with the kind it was called as: light,
normal or fallback), the model calls: how many, failures and failure rate, retries,
fallbacks, latency p50/p95, tokens in and out, cost (and, with a response cache, its hits,
misses and the tokens its hits saved); and the tool calls per tool. ``--json``
prints one object: the totals of the model calls at the top level (``calls``, ``failures``,
``retries``, ``tokens_in``, ``tokens_out``, ``cost``...) and the tables beneath them
(``by_node``, ``by_pattern``, ``by_model``, ``tools``). ``--advise`` adds the nodes whose
failures, retries, cost or latency stand out and what would likely help, with the figures
behind each (:mod:`sea.llm.advice`; in JSON, ``advice``).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

import orjson
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from sea.cli._fit import Fitted
from sea.cli._setup import add_db_argument, opened_store
from sea.cli._text import printable
from sea.errors import UsageError
from sea.llm.advice import Advice, advise
from sea.llm.stats import Statistics, StatsRow, since_moment, statistics


def register(subparsers: Any) -> None:
    """Add ``sea stats``."""
    parser = subparsers.add_parser(
        "stats", help="statistics of model and tool calls (per node, pattern, model, tool)"
    )
    add_db_argument(parser)
    parser.add_argument("--persona", help="only this persona's calls (default: every persona)")
    parser.add_argument("--since", help="only calls from then on: an ISO 8601 time with a UTC "
                        "offset, or a time ago such as 30m, 24h, 7d")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--advise", action="store_true", help="also the nodes whose failures, "
                        "retries, cost or latency stand out, and what would likely help")
    parser.set_defaults(func=_stats)


def since_time(text: str | None, now: datetime) -> datetime | None:
    """The moment ``--since`` names (None when not given; see
    :func:`sea.llm.stats.since_moment`).

    Raises:
        UsageError: neither a time ago (``24h``) nor an ISO 8601 time with an offset.
    """
    if text is None:
        return None
    try:
        return since_moment(text, now)
    except ValueError as wrong:
        raise UsageError(f"--since {text!r} {wrong}", code="SEA321") from None


def _stats(args: argparse.Namespace) -> int:
    since = since_time(args.since, datetime.now(UTC))
    with opened_store(args.db) as store:
        records = store.call_records(args.persona, since=since)
    found = statistics(records)
    advice = advise(records) if args.advise else None
    if args.json:
        data = found.to_json()
        if advice is not None:
            data["advice"] = [a.to_json() for a in advice]
        print(orjson.dumps(data).decode())
        return 0
    console = Console(highlight=False)
    if not console.is_terminal:  # piped: wide enough for every column
        console = Console(highlight=False, width=200)
    if not found.total.calls and not found.tools:
        console.print("no calls recorded" + (f" since {args.since}" if args.since else ""))
        return 0
    _print_tables(console, found)
    if advice is not None:
        _print_advice(console, advice)
    return 0


def _print_advice(console: Console, advice: list[Advice]) -> None:
    if not advice:
        console.print("\nadvice: no node stands out")
        return
    console.print("\nadvice:")
    for each in advice:
        figures = ", ".join(f"{name} {value}" for name, value in each.figures.items())
        console.print(printable(f"- {each.node} ({each.issue}): {each.finding}"))
        console.print(printable(f"  try: {each.suggestion}"))
        console.print(printable(f"  figures: {figures}"))


def _print_tables(console: Console, found: Statistics) -> None:
    t = found.total
    console.print(printable(
        f"{t.calls} model calls, {t.failures} failed ({t.failure_rate:.0%}), {t.retries} "
        f"retries, {t.fallbacks} fallbacks, {t.tokens_in} tokens in, {t.tokens_out} out, "
        f"cost {t.cost:.6f}"
    ))
    if t.cache_hits or t.cache_misses:
        console.print(printable(
            f"response cache: {t.cache_hits} hits, {t.cache_misses} misses, "
            f"{t.tokens_saved} tokens saved"))
    for title, rows in (("playbook.node", found.by_node), ("pattern", found.by_pattern),
                        ("model", found.by_model)):
        if rows:
            console.print(Fitted(stats_table(title, rows, tokens=True)))
    if found.tools:
        console.print(Fitted(stats_table("tool", found.tools, tokens=False)))


def stats_table(title: str, rows: list[StatsRow], *, tokens: bool) -> Table:
    """One table: a row per key with its calls, failures (and rate), retries, fallbacks,
    latency p50/p95 and, for model calls, tokens and cost."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    kinds = any(row.model_kind is not None for row in rows)
    headers = [title, *(["kind"] if kinds else []), "calls", "failed", "retries", "p50", "p95"]
    cached = tokens and any(row.cache_hits or row.cache_misses for row in rows)
    if tokens:
        headers += ["fallbacks", "in", "out", "cost"]
    if cached:
        headers += ["hits", "misses", "saved"]
    for index, header in enumerate(headers):
        left = index == 0 or header == "kind"
        table.add_column(header, no_wrap=True, justify="left" if left else "right")
    for row in rows:
        cells = [*([row.model_kind or "-"] if kinds else []), str(row.calls),
                 f"{row.failures} ({row.failure_rate:.0%})", str(row.retries),
                 f"{row.latency_p50_s:.2f}s", f"{row.latency_p95_s:.2f}s"]
        if tokens:
            cells += [str(row.fallbacks), str(row.tokens_in), str(row.tokens_out),
                      f"{row.cost:.6f}"]
        if cached:
            cells += [str(row.cache_hits), str(row.cache_misses), str(row.tokens_saved)]
        table.add_row(Text(printable(row.key)), *cells)
    return table
