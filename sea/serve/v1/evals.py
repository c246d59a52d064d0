"""``/v1/evals``: the runs ``sea eval`` stored, read-only, for the studio's Evals page.

The runs are the ``*.json`` files of the server's runs directory (``sea serve --evals DIR``;
by default the project's ``[eval] runs``, else ``.sea/evals`` beside the project file: where
``sea eval`` stores them). ``GET /v1/evals`` lists them newest first (a file that is not a
run is listed with the error that says why); ``GET /v1/evals/{run_id}`` gives one run whole
(every case of every model, each attempt's checks and what it observed, and the cases'
expectations when the run kept them); ``GET /v1/evals/{run_id}/compare?baseline=ID`` compares
it with an earlier run as ``sea eval --baseline`` does (:func:`sea.eval.report.compare_runs`).

They need the ``read`` role. Runs are the server's, as its playbooks are: every key that
may read sees them. A server without a runs directory answers an empty list with a note
saying how to give it one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Query

from sea.errors import InvalidRequest, ResourceNotFound, UsageError
from sea.eval.report import compare_runs
from sea.eval.runs import read_run, stored_runs
from sea.serve.deps import Ctx, Reader
from sea.serve.v1.common import Conflict, Options

router = APIRouter(prefix="/v1", tags=["evals"])
MAX_RUNS = 500
"""The most runs listed (the newest)."""
NO_DIRECTORY = ("this server has no eval runs directory: start sea serve with --evals DIR "
                "(where sea eval --runs DIR stores its runs), or from a project's directory "
                "(its runs: [eval] runs, else .sea/evals beside sea.toml)")
_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")


def _counts(model: dict[str, Any]) -> dict[str, int]:
    cases = model.get("cases", {})
    passed = sum(1 for c in cases.values() if c.get("passed") == c.get("runs"))
    return {"cases": len(cases), "passed": passed, "failed": len(cases) - passed}


def summary(run_id: str, run: dict[str, Any]) -> dict[str, Any]:
    """What the list shows of a run: when, its sets, each model's pass rate and counts."""
    models = [{"label": label, "pass_rate": model.get("pass_rate"),
               "spread": model.get("spread"), **_counts(model)}
              for label, model in run["models"].items()]
    return {"id": run_id, "created": run.get("created"),
            "sets": [Path(str(s)).name for s in run.get("sets", [])],
            "repeat": run.get("repeat"), "judge": run.get("judge"), "cases": run.get("cases"),
            "models": models,
            "counts": {key: sum(m[key] for m in models) for key in ("cases", "passed",
                                                                      "failed")}}


def _directory(evals: Path | None) -> Path:
    if evals is None:
        raise ResourceNotFound(f"no such run: {NO_DIRECTORY}")
    return evals


def _load(directory: Path, run_id: str, what: str = "run") -> dict[str, Any]:
    if not _ID.fullmatch(run_id):
        raise InvalidRequest(f"{run_id!r} is not a run id (as GET /v1/evals lists them, "
                             "e.g. 20261129-081500-3fa2)")
    path = directory / f"{run_id}.json"
    if not path.is_file():
        latest = ", ".join(reversed(stored_runs(directory)[-3:])) or "none yet"
        raise ResourceNotFound(f"no {what} {run_id!r} in the server's eval runs (the latest: "
                               f"{latest})")
    try:
        return read_run(path)
    except UsageError as exc:
        raise Conflict(f"{what} {run_id!r} cannot be shown: {exc.message}",
                       code=exc.code) from None



def _summaries(directory: Path) -> list[dict[str, Any]]:
    """The newest runs' summaries (a file that is not a run: its id and error)."""
    items: list[dict[str, Any]] = []
    for run_id in list(reversed(stored_runs(directory)))[:MAX_RUNS]:
        try:
            items.append(summary(run_id, read_run(directory / f"{run_id}.json")))
        except UsageError as exc:
            items.append({"id": run_id, "error": {"code": exc.code, "message": exc.message}})
    return items

@router.get("/evals")
async def list_runs(ctx: Ctx, options: Options, principal: Reader) -> dict[str, Any]:
    """The stored runs, newest first: each one's time, sets, repeat, and per model its pass
    rate and how many cases passed (every repeat) and failed; a file that is not a run is
    listed with its error."""
    if options.evals is None:
        return {"items": [], "note": NO_DIRECTORY}
    items = await ctx.call(_summaries, options.evals)  # the files, read off the event loop
    note = None if items else ("no run is stored yet: sea eval SET stores each run in the "
                               "server's eval runs directory (sea eval --runs DIR, the same "
                               "DIR as sea serve --evals)")
    return {"items": items, "note": note}


@router.get("/evals/{run_id}")
async def show_run(run_id: str, ctx: Ctx, options: Options, principal: Reader) -> dict[str, Any]:
    """One run whole: per model its pass rate and spread over the repeats, latency, tokens
    and cost, each case with its attempts (every expectation's check, what was observed),
    and ``case_specs`` (each case's input and expectations) when the run kept them."""
    run = await ctx.call(_load, _directory(options.evals), run_id)
    return {**run, "id": run_id, "summary": summary(run_id, run)}


@router.get("/evals/{run_id}/compare")
async def compare(run_id: str, ctx: Ctx, options: Options, principal: Reader,
                  baseline: str = Query(min_length=1, max_length=200,
                                        description="the baseline run's id")
                  ) -> dict[str, Any]:
    """The run against a baseline run, as ``sea eval --baseline``: per case (and model)
    regressed (passes less often), improved or unchanged, with the counts and the notes
    (pass rates, cases or models only one run has)."""
    directory = _directory(options.evals)
    run = await ctx.call(_load, directory, run_id)
    before = await ctx.call(_load, directory, baseline, "baseline run")
    found = compare_runs(before, run)
    regressed = [c.to_json() for c in found.changes if c.regressed]
    improved = [c.to_json() for c in found.changes if not c.regressed]
    unchanged = [c.to_json() for c in found.unchanged]
    return {"run": summary(run_id, run), "baseline": summary(baseline, before),
            "regressed": regressed, "improved": improved, "unchanged": unchanged,
            "counts": {"regressed": len(regressed), "improved": len(improved),
                       "unchanged": len(unchanged)},
            "notes": found.notes}
