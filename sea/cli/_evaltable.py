"""How ``sea eval`` shows a run: a progress line per attempt (stderr), a table per model
(pass rate per case and per expectation, latency, tokens, cost, the spread over the
repeats), and what changed against a baseline."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from sea.cli._fit import Fitted
from sea.cli._text import printable
from sea.eval.report import Change
from sea.eval.runner import Attempt


class Progress:
    """One line per finished attempt on stderr: ``[3/20] model set/id PASS 0.41s``."""

    def __init__(self, label: str, total: int, *, quiet: bool = False) -> None:
        self.label, self.total, self.quiet = label, total, quiet
        self.count = self.passed = 0

    def step(self, attempt: Attempt) -> None:
        """Count (and show) an attempt that ended."""
        self.count += 1
        self.passed += attempt.passed
        if self.quiet:
            return
        word = "PASS" if attempt.passed else "FAIL"
        why = ""
        if not attempt.passed:
            failed = [c for c in attempt.checks if c.passed is False]
            why = f"  {attempt.error}" if attempt.error else \
                f"  {failed[0].name}: {failed[0].detail}" if failed else ""
        repeat = f" #{attempt.repeat + 1}" if attempt.repeat else ""
        print(printable(f"[{self.count}/{self.total}] {self.label} {attempt.case}{repeat} "
                        f"{word} {attempt.latency_s:.2f}s{why}"[:300]),
              file=sys.stderr, flush=True)

    def done(self) -> None:
        """The model's last line."""
        if not self.quiet:
            print(f"{self.label}: {self.passed}/{self.total} attempts passed",
                  file=sys.stderr, flush=True)


def _console() -> Console:
    console = Console(highlight=False)
    return console if console.is_terminal else Console(highlight=False, width=200)


def _rate(passed: int, runs: int) -> str:
    return f"{passed}/{runs}" if runs > 1 else ("pass" if passed else "FAIL")


def show_model(label: str, summary: Mapping[str, Any]) -> None:
    """The model's tables: its cases, then its expectations, then its totals."""
    console = _console()
    console.print(Text(printable(f"model {label}"), style="bold"), soft_wrap=True)
    cases = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header in ("case", "passed", "latency", "in", "out", "cost", "failed expectation"):
        cases.add_column(header, no_wrap=header != "failed expectation",
                         justify="left" if header in ("case", "failed expectation")
                         else "right")
    for key, case in summary["cases"].items():
        latency = case["latency_s"]
        spread = (f" ±{latency['stdev']:.2f}" if case["runs"] > 1 else "")
        cases.add_row(Text(printable(key)), _rate(case["passed"], case["runs"]),
                      f"{latency['mean']:.2f}s{spread}", f"{case['tokens_in']:.0f}",
                      f"{case['tokens_out']:.0f}", f"{case['cost']:.6f}",
                      Text(printable("; ".join(case["failures"])[:160])))
    console.print(Fitted(cases))
    kinds = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header in ("expectation", "passed", "rate"):
        kinds.add_column(header, justify="left" if header == "expectation" else "right")
    for name, kind in summary["expectations"].items():
        kinds.add_row(name, f"{kind['passed']}/{kind['judged']}", f"{kind['pass_rate']:.0%}")
    if summary["expectations"]:
        console.print(Fitted(kinds))
    spread = summary["spread"]
    over = (f" (median of {len(spread['repeats'])} repeats; min {spread['min']:.1%}, max "
            f"{spread['max']:.1%}, stdev {spread['stdev']:.1%})" if len(spread["repeats"]) > 1
            else "")
    latency = summary["latency_s"]
    console.print(printable(
        f"{label}: pass rate {summary['pass_rate']:.1%}{over}; latency median "
        f"{latency['median']:.2f}s, max {latency['max']:.2f}s; tokens {summary['tokens_in']} "
        f"in, {summary['tokens_out']} out; cost {summary['cost']:.6f}"), soft_wrap=True)


def show_changes(baseline: str, changes: Sequence[Change], notes: Sequence[str]) -> bool:
    """What regressed and what improved against the baseline; whether anything regressed."""
    console = _console()
    worse = [c for c in changes if c.regressed]
    better = [c for c in changes if not c.regressed]
    console.print(printable(f"against baseline {baseline}: {len(worse)} regressed, "
                            f"{len(better)} improved"), soft_wrap=True)
    for title, group in (("REGRESSED", worse), ("improved", better)):
        for change in group:
            console.print(printable(f"  {title} {change.model} {change.case}: "
                                    f"{change.before:.0%} -> {change.after:.0%}"),
                          soft_wrap=True)
    for note in notes:
        console.print(printable(f"  note: {note}"), soft_wrap=True)
    return bool(worse)
