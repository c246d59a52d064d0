"""A run's report: pass rates per case, per expectation and per model with the spread over
the repeats, latency, tokens and cost (:func:`summarize`); its JUnit XML form; and the
comparison of two runs (:func:`compare`).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

from sea.eval.runner import Attempt


def _spread(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "median": 0.0, "min": 0.0, "max": 0.0, "stdev": 0.0}
    return {
        "mean": statistics.fmean(values), "median": statistics.median(values),
        "min": min(values), "max": max(values),
        "stdev": statistics.pstdev(values) if len(values) > 1 else 0.0,
    }


def summarize(attempts: Sequence[Attempt], repeat: int,
              labels: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """One model's results: ``pass_rate`` (the median over the repeats) with ``spread``,
    ``cases`` (each with its pass rate, latency, tokens, cost and failures),
    ``expectations`` (each kind's pass rate) and ``groups`` (the pass rate of the cases of
    each label ``labels`` gives a case: its tags, ``lang:xx``)."""
    cases: dict[str, dict[str, Any]] = {}
    kinds: dict[str, list[int]] = {}
    per_repeat: dict[int, list[bool]] = {}
    for attempt in attempts:
        entry = cases.setdefault(attempt.case, {"attempts": []})
        entry["attempts"].append(attempt.to_json())
        per_repeat.setdefault(attempt.repeat, []).append(attempt.passed)
        for check in attempt.checks:
            if check.passed is not None:
                tally = kinds.setdefault(check.name, [0, 0])
                tally[0] += int(check.passed)
                tally[1] += 1
    for entry in cases.values():
        runs = entry["attempts"]
        passed = sum(1 for a in runs if a["passed"])
        entry.update({
            "runs": len(runs), "passed": passed, "pass_rate": passed / len(runs),
            "latency_s": _spread([a["latency_s"] for a in runs]),
            "tokens_in": statistics.fmean(a["tokens_in"] for a in runs),
            "tokens_out": statistics.fmean(a["tokens_out"] for a in runs),
            "cost": statistics.fmean(a["cost"] for a in runs),
            "failures": _failures(runs),
        })
    groups: dict[str, list[int]] = {}
    for attempt in attempts:
        for label in (labels or {}).get(attempt.case, ()):
            tally = groups.setdefault(label, [0, 0])
            tally[0] += int(attempt.passed)
            tally[1] += 1
    rates = [sum(v) / len(v) for _, v in sorted(per_repeat.items()) if v]
    spread = _spread(rates)
    return {
        "pass_rate": spread["median"], "repeat": repeat,
        "spread": {"repeats": rates, **spread},
        "cases": cases,
        "expectations": {name: {"passed": p, "judged": n, "pass_rate": p / n}
                         for name, (p, n) in sorted(kinds.items())},
        "groups": {name: {"passed": p, "runs": n, "pass_rate": p / n}
                   for name, (p, n) in sorted(groups.items())},
        "latency_s": _spread([a.latency_s for a in attempts]),
        "tokens_in": sum(a.observed.tokens_in for a in attempts),
        "tokens_out": sum(a.observed.tokens_out for a in attempts),
        "cost": sum(a.observed.cost for a in attempts),
    }


def _failures(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    found: list[str] = []
    for run in runs:
        texts = ([f"error: {run['error']}"] if run["error"] else []) + [
            f"{c['name']}: {c['detail']}" for c in run["checks"] if c["passed"] is False]
        for text in texts:
            if text not in found:
                found.append(text)
    return found


# -- comparison --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """A case whose pass rate differs between the baseline and this run."""

    model: str
    case: str
    before: float
    after: float

    @property
    def regressed(self) -> bool:
        """It passes less often than in the baseline."""
        return self.after < self.before

    def to_json(self) -> dict[str, Any]:
        """``{model, case, before, after}``."""
        return {"model": self.model, "case": self.case, "before": self.before,
                "after": self.after}


def pairs(baseline: Mapping[str, Any], run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The models compared, ``(baseline's, run's)``: those present in both runs (a run of
    one model is compared with a baseline of one model whatever their names)."""
    before_models: Mapping[str, Any] = baseline.get("models", {})
    after_models: Mapping[str, Any] = run.get("models", {})
    found = [(m, m) for m in after_models if m in before_models]
    if not found and len(before_models) == 1 and len(after_models) == 1:
        found = [(next(iter(before_models)), next(iter(after_models)))]
    return found


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two runs compared: the cases whose pass rate changed, those in both runs whose pass
    rate did not (each a :class:`Change` with ``before == after``), and notes on what could
    not be compared."""

    changes: list[Change]
    unchanged: list[Change]
    notes: list[str]


def compare_runs(baseline: Mapping[str, Any], run: Mapping[str, Any]) -> Comparison:
    """The comparison of ``run`` with ``baseline``, per pair of models (:func:`pairs`)."""
    before_models: Mapping[str, Any] = baseline.get("models", {})
    after_models: Mapping[str, Any] = run.get("models", {})
    paired = pairs(baseline, run)
    notes = [f"model {m} is not in the baseline" for m in after_models
             if m not in {a for _, a in paired}]
    changes: list[Change] = []
    unchanged: list[Change] = []
    for old, new in paired:
        notes.append(f"{new}: pass rate {before_models[old]['pass_rate']:.1%} -> "
                     f"{after_models[new]['pass_rate']:.1%}")
        before, after = before_models[old]["cases"], after_models[new]["cases"]
        for case, entry in after.items():
            if case not in before:
                notes.append(f"{new}: case {case} is new (not in the baseline)")
                continue
            was, now = before[case]["pass_rate"], entry["pass_rate"]
            (changes if was != now else unchanged).append(Change(new, case, was, now))
        notes += [f"{new}: case {case} is in the baseline only" for case in before
                  if case not in after]
    return Comparison(changes, unchanged, notes)


def compare(baseline: Mapping[str, Any], run: Mapping[str, Any]) -> tuple[list[Change],
                                                                           list[str]]:
    """The cases whose pass rate changed, and the notes (:func:`compare_runs`)."""
    found = compare_runs(baseline, run)
    return found.changes, found.notes


# -- JUnit XML -------------------------------------------------------------------------


def junit(run: Mapping[str, Any]) -> bytes:
    """The run as JUnit XML: a test suite per model, a test case per eval case (failed
    unless every repeat passed; the failure lists what failed)."""
    suites = ElementTree.Element("testsuites", name="sea eval", id=str(run.get("id", "")))
    for label, model in run.get("models", {}).items():
        cases = model["cases"]
        failed = sum(1 for c in cases.values() if c["passed"] < c["runs"])
        suite = ElementTree.SubElement(
            suites, "testsuite", name=label, tests=str(len(cases)), failures=str(failed),
            errors="0", time=f"{sum(c['latency_s']['mean'] for c in cases.values()):.3f}")
        for key, case in cases.items():
            set_name, _, case_id = key.partition("/")
            element = ElementTree.SubElement(
                suite, "testcase", classname=f"{label}.{set_name}", name=case_id,
                time=f"{case['latency_s']['mean']:.3f}")
            if case["passed"] < case["runs"]:
                failure = ElementTree.SubElement(
                    element, "failure",
                    message=f"{case['passed']}/{case['runs']} passed")
                failure.text = "\n".join(case["failures"])
    ElementTree.indent(suites)
    text: bytes = ElementTree.tostring(suites, encoding="utf-8", xml_declaration=True)
    return text + b"\n"
