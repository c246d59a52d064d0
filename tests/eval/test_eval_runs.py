"""Runs of ``sea eval``: repeats and their spread, the stored run and its id, the baseline
comparison and its exit code, JUnit XML, progress, several models."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import orjson
import pytest

from sea.eval.expect import Check, Observation
from sea.eval.report import compare, summarize
from sea.eval.runner import Attempt
from tests.eval.conftest import CHAT_SCRIPT, DOG, MEMORY_SCRIPT, EvalSea

CASES = [
    {"id": "hi", "input": "Hi!", "expect": {"route": "basic_chat", "reply": {"contains": "Aoi"}}},
    {"id": "dog", "input": "Hey, sum up all about the dog", "persona": DOG,
     "expect": {"route": "memory_research"}},
]


def _attempt(case: str, repeat: int, *passed: bool) -> Attempt:
    checks = [Check(f"k{i}", ok, "" if ok else "wrong") for i, ok in enumerate(passed)]
    seen = Observation(tokens_in=10, tokens_out=2, cost=0.5)
    return Attempt(case, repeat, checks, seen, latency_s=1.0 + repeat)


def test_repeats_give_a_pass_rate_per_case_and_the_spread_over_repeats() -> None:
    attempts = [_attempt("s/a", 0, True, True), _attempt("s/a", 1, True, False),
                _attempt("s/a", 2, True, True), _attempt("s/b", 0, False),
                _attempt("s/b", 1, True), _attempt("s/b", 2, True)]
    summary = summarize(attempts, 3, {"s/a": ["greeting", "lang:en"], "s/b": ["lang:en"]})
    assert summary["spread"]["repeats"] == [0.5, 0.5, 1.0]
    assert summary["pass_rate"] == 0.5  # the median of the repeats
    assert (summary["spread"]["min"], summary["spread"]["max"]) == (0.5, 1.0)
    assert summary["spread"]["stdev"] == pytest.approx(0.2357, abs=1e-4)
    a = summary["cases"]["s/a"]
    assert (a["runs"], a["passed"], a["pass_rate"]) == (3, 2, 2 / 3)
    assert a["latency_s"]["mean"] == 2.0 and a["latency_s"]["min"] == 1.0
    assert a["failures"] == ["k1: wrong"] and a["cost"] == 0.5
    assert summary["expectations"]["k0"] == {"passed": 5, "judged": 6, "pass_rate": 5 / 6}
    assert summary["expectations"]["k1"] == {"passed": 2, "judged": 3, "pass_rate": 2 / 3}
    assert summary["tokens_in"] == 60 and summary["cost"] == 3.0
    assert summary["groups"] == {"greeting": {"passed": 2, "runs": 3, "pass_rate": 2 / 3},
                                 "lang:en": {"passed": 4, "runs": 6, "pass_rate": 4 / 6}}


def test_a_run_repeats_stores_compares_and_exits_1_on_a_regression(sea: EvalSea) -> None:
    sets = sea.jsonl("set.jsonl", CASES)
    chat = sea.model(CHAT_SCRIPT, "chat.json")
    done, first = sea.run(str(sets), "--model", chat, "--repeat", "2")
    assert done.code == 0, done.err
    (model,) = first["models"].values()
    assert model["cases"]["set/hi"]["runs"] == 2 and model["cases"]["set/hi"]["passed"] == 2
    assert model["cases"]["set/dog"]["passed"] == 0
    assert model["spread"]["repeats"] == [0.5, 0.5] and model["pass_rate"] == 0.5
    stored = sea.root.parent / "home" / "evals" / f"{first['id']}.json"
    assert orjson.loads(stored.read_bytes()) == first
    assert f"run {first['id']} stored in {stored}" in done.out

    memory = sea.model(MEMORY_SCRIPT, "memory.json")  # hi now fails, dog now passes
    done, second = sea.run(str(sets), "--model", memory, "--baseline", first["id"])
    assert done.code == 1
    assert f"against baseline {first['id']}: 1 regressed, 1 improved" in done.out
    assert f"REGRESSED {memory} set/hi: 100% -> 0%" in done.out
    assert f"improved {memory} set/dog: 0% -> 100%" in done.out
    assert f"note: {memory}: pass rate 50.0% -> 50.0%" in done.out

    done, _ = sea.run(str(sets), "--model", memory, "--baseline", "latest")
    assert done.code == 0, done.out  # the latest run is the second: nothing changed
    assert "0 regressed, 0 improved" in done.out
    saved = sea.write("base.json", orjson.dumps(second).decode())
    done, _ = sea.run(str(sets), "--model", chat, "--baseline", str(saved))
    assert done.code == 1 and f"REGRESSED {chat} set/dog: 100% -> 0%" in done.out

    done = sea("eval", str(sets), "--model", chat, "--baseline", "nope")
    assert done.code == 2 and "--baseline nope: no such file nor stored run" in done.err


def test_compare_notes_what_only_one_run_has() -> None:
    before = {"models": {"a": {"pass_rate": 1.0, "cases": {"s/x": {"pass_rate": 1.0},
                                                           "s/gone": {"pass_rate": 1.0}}}}}
    after = {"models": {"a": {"pass_rate": 0.5, "cases": {"s/x": {"pass_rate": 1.0},
                                                          "s/new": {"pass_rate": 0.0}}},
                        "b": {"pass_rate": 1.0, "cases": {}}}}
    changes, notes = compare(before, after)
    assert changes == []
    assert notes == ["model b is not in the baseline", "a: pass rate 100.0% -> 50.0%",
                     "a: case s/new is new (not in the baseline)",
                     "a: case s/gone is in the baseline only"]


def test_junit_progress_and_a_table_per_model(sea: EvalSea) -> None:
    sets = sea.jsonl("set.jsonl", CASES)
    chat, memory = sea.model(CHAT_SCRIPT, "chat.json"), sea.model(MEMORY_SCRIPT, "mem.json")
    junit = sea.root / "out.xml"
    done = sea("eval", str(sets), "--model", chat, "--model", memory, "--junit", str(junit),
               "--concurrency", "1")
    assert done.code == 0, done.err
    assert f"[1/2] {chat} set/hi PASS" in done.err
    assert f"[2/2] {chat} set/dog FAIL" in done.err
    assert "route: expected memory_research, routed to basic_chat" in done.err, done.err
    assert f"{chat}: 1/2 attempts passed" in done.err
    assert f"model {chat}" in done.out and f"model {memory}" in done.out
    assert f"{chat}: pass rate 50.0%" in done.out
    suites = ElementTree.parse(junit).getroot()
    assert suites.tag == "testsuites"
    by_name = {s.get("name"): s for s in suites}
    assert set(by_name) == {chat, memory}
    suite = by_name[chat]
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["hi"].find("failure") is None
    failure = cases["dog"].find("failure")
    assert failure is not None and failure.get("message") == "0/1 passed"
    assert failure.text == "route: expected memory_research, routed to basic_chat"
    assert cases["dog"].get("classname") == f"{chat}.set"
    assert by_name[memory].get("failures") == "1"


def test_runs_are_stored_in_the_project_state_directory(sea: EvalSea) -> None:
    sea.write("sea.toml", 'db = ".sea/memory.sqlite"\n')
    sets = sea.jsonl("set.jsonl", CASES[:1])
    done, run = sea.run(str(sets), "--model", sea.model(CHAT_SCRIPT))
    assert done.code == 0, done.err
    assert (sea.root / ".sea" / "evals" / f"{run['id']}.json").is_file()
    sea.write("sea.toml", '[eval]\nruns = "results"\n')
    done, run = sea.run(str(sets), "--model", sea.model(CHAT_SCRIPT))
    assert (sea.root / "results" / f"{run['id']}.json").is_file()
    assert sea.setting("eval.runs", "eval", "x.yaml") == (str(sea.root / "results"),
                                                      f"{sea.root / 'sea.toml'}:2")
    done, again = sea.run(str(sets), "--model", sea.model(CHAT_SCRIPT), "--no-project",
                          "--baseline", run["id"])
    assert done.code == 2 and "no such file nor stored run" in done.err  # another directory


def test_without_model_the_project_model_is_evaluated(sea: EvalSea) -> None:
    model = sea.model(CHAT_SCRIPT)
    sea.write("sea.toml", f'[model]\nname = "{model}"\n')
    done, run = sea.run(str(sea.jsonl("set.jsonl", CASES[:1])))
    assert done.code == 0, done.err
    assert list(run["models"]) == [model]
    assert run["models"][model]["pass_rate"] == 1.0


def test_runs_stored_in_the_same_second_list_in_the_order_they_were_written(
    tmp_path: Path,
) -> None:
    import os

    from sea.eval.runs import load_run, save_run, stored_runs

    # ids of one second whose random tails sort against the order they were written
    first, second, earlier = "20261129-081500-ffff", "20261129-081500-0000", \
        "20261129-081459-9999"
    for n, run_id in enumerate((earlier, first, second)):
        path = save_run({"id": run_id, "models": {}, "n": n}, tmp_path)
        os.utime(path, ns=(1_000_000_000 * (n + 1), 1_000_000_000 * (n + 1)))
    assert stored_runs(tmp_path) == [earlier, first, second]
    assert load_run("latest", tmp_path)["n"] == 2
