"""``/v1/evals``: the runs a real ``sea eval`` stored (scripted models), listed newest first,
shown whole, and compared as ``sea eval --baseline`` compares them; and where ``sea serve``
finds them (``--evals``, the project's ``[eval] runs``, ``.sea/evals``)."""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sea.cli.serve import evals_directory
from sea.errors import UsageError
from tests.eval.conftest import CHAT_SCRIPT, DOG, MEMORY_SCRIPT, EvalSea
from tests.project.conftest import sea_in
from tests.serve.v1app import App, serving

CASES = [
    {"id": "hi", "input": "Hi!", "expect": {"route": "basic_chat", "reply": {"contains": "Aoi"}}},
    {"id": "dog", "input": "Hey, sum up all about the dog", "persona": DOG,
     "expect": {"route": "memory_research"}},
    {"id": "any", "input": "Hello", "expect": {"route_any": ["basic_chat", "memory_research"]}},
]
"""``hi`` passes on the chat script only, ``dog`` on the memory script only, ``any`` on
both."""


@dataclass(frozen=True)
class Runs:
    """Two runs ``sea eval`` stored in ``directory``: ``first`` (chat script, 2 repeats),
    then ``second`` (memory script), and a file that is no run."""

    directory: Path
    first: dict[str, Any]
    second: dict[str, Any]
    chat: str
    memory: str


@pytest.fixture
def sea(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> EvalSea:
    return sea_in(EvalSea, tmp_path, monkeypatch, capsys)


@pytest.fixture(scope="module")
def stored() -> dict[str, Runs]:
    """The runs ``sea eval`` stored for the module's first test that needs them: they are
    the same for every test, which reads a copy of its own (:func:`runs`)."""
    return {}


@pytest.fixture
def runs(sea: EvalSea, stored: dict[str, Runs]) -> Runs:
    if "runs" not in stored:
        stored["runs"] = _store_runs(sea)
    made = stored["runs"]
    origin = made.directory.parent
    if origin == sea.root:
        return made
    for name in ("greet.jsonl", "chat.json", "memory.json"):
        shutil.copyfile(origin / name, sea.root / name)
    directory = shutil.copytree(made.directory, sea.root / "runs")
    return Runs(directory, made.first, made.second, made.chat, made.memory)


def _store_runs(sea: EvalSea) -> Runs:
    directory = sea.root / "runs"
    sets = sea.jsonl("greet.jsonl", CASES)
    chat, memory = sea.model(CHAT_SCRIPT, "chat.json"), sea.model(MEMORY_SCRIPT, "memory.json")
    done, first = sea.run(str(sets), "--model", chat, "--repeat", "2", "--runs", str(directory))
    assert done.code == 0, done.err
    done, second = sea.run(str(sets), "--model", memory, "--runs", str(directory))
    assert done.code == 0, done.err
    (directory / "0-broken.json").write_text('{"models": ')
    (directory / "0-odd.json").write_text('{"models": {"m": {"pass_rate": 1, "cases": '
                                          '{"s/a": {"runs": 1}}}}}')
    return Runs(directory, first, second, chat, memory)


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[App]:
    with serving(tmp_path) as app:
        yield app


def _serve(v1: App, directory: Path | None) -> None:
    v1.client.app.state.v1.evals = directory  # type: ignore[attr-defined]


def test_runs_are_listed_newest_first_with_pass_rates_and_a_broken_file_with_its_error(
        v1: App, runs: Runs) -> None:
    _serve(v1, runs.directory)
    answer = v1.get("/v1/evals", "k-read")
    assert answer.status_code == 200, answer.text
    items = answer.json()["items"]
    assert [item["id"] for item in items] == [runs.second["id"], runs.first["id"], "0-odd",
                                              "0-broken"]
    newest, oldest, odd, broken = items
    assert newest["sets"] == ["greet.jsonl"] and newest["repeat"] == 1
    assert newest["created"] == runs.second["created"]
    assert newest["models"] == [{"label": runs.memory, "pass_rate": 2 / 3, "cases": 3,
                                 "passed": 2, "failed": 1,
                                 "spread": runs.second["models"][runs.memory]["spread"]}]
    assert newest["counts"] == {"cases": 3, "passed": 2, "failed": 1}
    assert oldest["repeat"] == 2 and oldest["models"][0]["label"] == runs.chat
    assert oldest["models"][0]["spread"]["repeats"] == [2 / 3, 2 / 3]
    assert oldest["counts"] == {"cases": 3, "passed": 2, "failed": 1}
    assert broken["error"]["code"] == "SEA399"
    assert broken["error"]["message"].startswith("0-broken.json is not JSON")
    assert odd["error"] == {"code": "SEA399", "message": "0-odd.json is not an eval run: case "
                            "'s/a' of model 'm' has no `runs`, `passed`, `pass_rate`"}
    assert str(runs.directory) not in answer.text  # the server's paths stay its own
    assert answer.json()["note"] is None


def test_a_run_is_shown_whole_with_each_expectation_and_what_was_expected(
        v1: App, runs: Runs) -> None:
    _serve(v1, runs.directory)
    run = v1.get(f"/v1/evals/{runs.first['id']}").json()
    assert run["id"] == runs.first["id"] and run["summary"]["counts"]["failed"] == 1
    model = run["models"][runs.chat]
    hi, dog = model["cases"]["greet/hi"], model["cases"]["greet/dog"]
    assert (hi["runs"], hi["passed"], dog["passed"]) == (2, 2, 0)
    assert [a["repeat"] for a in dog["attempts"]] == [0, 1]
    checks = {c["name"]: c for c in dog["attempts"][0]["checks"]}
    assert checks["route"]["passed"] is False
    assert checks["route"]["detail"] == "expected memory_research, routed to basic_chat"
    assert dog["attempts"][0]["observed"]["route"] == "basic_chat"
    assert {c["name"] for c in hi["attempts"][1]["checks"]} == {"route", "reply.contains"}
    assert model["latency_s"]["max"] >= model["latency_s"]["min"] > 0
    assert model["tokens_in"] > 0
    specs = run["case_specs"]
    assert specs["greet/hi"]["expect"] == CASES[0]["expect"]
    assert specs["greet/dog"]["turns"] == [CASES[1]["input"]]


def test_a_comparison_says_what_regressed_improved_and_stayed_as_sea_eval_baseline(
        v1: App, runs: Runs) -> None:
    _serve(v1, runs.directory)
    path = f"/v1/evals/{runs.second['id']}/compare"
    answer = v1.get(path, params={"baseline": runs.first["id"]})
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["counts"] == {"regressed": 1, "improved": 1, "unchanged": 1}
    assert found["regressed"] == [{"model": runs.memory, "case": "greet/hi", "before": 1.0,
                                   "after": 0.0}]
    assert found["improved"] == [{"model": runs.memory, "case": "greet/dog", "before": 0.0,
                                  "after": 1.0}]
    assert found["unchanged"] == [{"model": runs.memory, "case": "greet/any", "before": 1.0,
                                   "after": 1.0}]
    assert found["baseline"]["id"] == runs.first["id"]
    assert found["run"]["id"] == runs.second["id"]
    assert f"{runs.memory}: pass rate 66.7% -> 66.7%" in found["notes"]
    back = v1.get(f"/v1/evals/{runs.first['id']}/compare",
                  params={"baseline": runs.second["id"]}).json()
    assert [c["case"] for c in back["regressed"]] == ["greet/dog"]


def test_missing_broken_and_malformed_runs_answer_clearly(v1: App, runs: Runs) -> None:
    _serve(v1, runs.directory)
    missing = v1.get("/v1/evals/20990101-000000-0000")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "SEA820"
    assert "no run '20990101-000000-0000'" in missing.json()["error"]["message"]
    assert runs.second["id"] in missing.json()["error"]["message"]  # the latest are named
    base = v1.get(f"/v1/evals/{runs.first['id']}/compare", params={"baseline": "nope"})
    assert base.status_code == 404 and "no baseline run 'nope'" in base.json()["error"]["message"]
    assert v1.get(f"/v1/evals/{runs.first['id']}/compare").status_code == 422
    broken = v1.get("/v1/evals/0-broken")
    assert broken.status_code == 409 and broken.json()["error"]["code"] == "SEA399"
    assert "0-broken.json is not JSON" in broken.json()["error"]["message"]
    odd = v1.get(f"/v1/evals/{runs.first['id']}/compare", params={"baseline": "0-odd"})
    assert odd.status_code == 409 and odd.json()["error"]["code"] == "SEA399"
    assert "baseline run '0-odd' cannot be shown" in odd.json()["error"]["message"]
    for wrong in ("..", ".hidden", "a%20b"):
        assert v1.get(f"/v1/evals/{wrong}").status_code in (404, 422), wrong
    assert v1.get("/v1/evals/.hidden").status_code == 422


def test_without_a_directory_the_list_is_empty_with_a_note_and_roles_are_needed(
        v1: App, runs: Runs) -> None:
    answer = v1.get("/v1/evals").json()
    assert answer["items"] == [] and "--evals DIR" in answer["note"]
    shown = v1.get(f"/v1/evals/{runs.first['id']}")
    assert shown.status_code == 404 and "--evals DIR" in shown.json()["error"]["message"]
    _serve(v1, runs.directory / "none-yet")
    empty = v1.get("/v1/evals").json()
    assert empty["items"] == [] and "no run is stored yet" in empty["note"]
    assert v1.client.get("/v1/evals").status_code == 401
    assert v1.get("/v1/evals", "k-none").status_code == 403
    document = v1.client.get("/openapi.json").json()
    assert {"/v1/evals", "/v1/evals/{run_id}", "/v1/evals/{run_id}/compare"} <= set(
        document["paths"])


def test_serve_finds_runs_by_flag_project_setting_or_project_directory(sea: EvalSea) -> None:
    def args(*given: str) -> argparse.Namespace:
        return argparse.Namespace(evals=given[0] if given else None, project=None,
                                  no_project=False)

    assert evals_directory(args()) is None  # no project: nothing to show
    sea.write("sea.toml", 'db = ".sea/memory.sqlite"\n')
    assert evals_directory(args()) == sea.root / ".sea" / "evals"
    assert evals_directory(args("elsewhere")) == Path("elsewhere")
    sea.write("file.txt", "x")
    with pytest.raises(UsageError, match="--evals file.txt: not a directory"):
        evals_directory(args("file.txt"))
    sea.write("sea.toml", '[eval]\nruns = "results"\n')
    assert sea.setting("eval.runs", "serve") == (str(sea.root / "results"),
                                                 f"{sea.root / 'sea.toml'}:2")


def test_sea_eval_refuses_a_broken_baseline_as_the_server_does(sea: EvalSea, runs: Runs
                                                                ) -> None:
    sets = sea.root / "greet.jsonl"
    done = sea("eval", str(sets), "--model", runs.chat, "--runs", str(runs.directory),
               "--baseline", "0-odd", "--quiet")
    assert done.code == 2
    assert ("--baseline 0-odd: 0-odd.json is not an eval run: case 's/a' of model 'm' has no "
            "`runs`, `passed`, `pass_rate`; give a run id") in done.err
