"""``sea eval``: run eval sets on one model or several, report, store, compare."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from langchain_core.language_models import BaseChatModel

from sea.cli._budget import add_budget_arguments, budget_of, llm_options_of
from sea.cli._evaltable import Progress, show_changes, show_model
from sea.cli._filelimits import file_limit
from sea.cli._limits import add_limit_argument, limits_of
from sea.cli._numbers import positive_count
from sea.cli._project.load import project_file
from sea.cli._runtime import chat_models, model_option, search_dirs
from sea.cli._setup import data_dir
from sea.errors import UsageError
from sea.eval.cases import EvalCase, load_sets
from sea.eval.report import compare, junit, summarize
from sea.eval.runner import Setup, run_cases
from sea.eval.runs import load_run, new_id, save_run
from sea.jsonfile import CONFIG_FILES
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from sea.llm.structured import METHODS

HELP = "run eval sets of cases on models and report pass rates (JSON, JUnit), vs a baseline"
_FRESH = ("scripted:", "replay:")
"""Model specs whose model answers from a script: made afresh for every attempt."""
_SERIAL = ("local",)
"""Model specs of models that are not thread-safe: their attempts run one at a time."""


def register(subparsers: Any) -> None:
    """Add ``sea eval``."""
    parser: argparse.ArgumentParser = subparsers.add_parser("eval", help=HELP)
    parser.add_argument("sets", nargs="+", metavar="SET",
                        help="an eval set (.yaml, .yml, .jsonl) or a directory of them")
    parser.add_argument(
        "--model", action="append", default=[], metavar="SPEC",
        help="a model to evaluate, as `sea run --model` takes it: local, local:PATH, "
        "PROVIDER:NAME, scripted:FILE (repeatable: a table per model; default: the "
        "project's model, else local)",
    )
    parser.add_argument(
        "--model-option", action="append", default=[], metavar="KEY=VALUE", type=model_option,
        help="option for every model's constructor (as sea run's; repeatable)",
    )
    parser.add_argument("--structured-method", default="auto", choices=("auto", *METHODS),
                        help="how models are asked for structured answers (as sea run's)")
    parser.add_argument("--playbooks", action="append", default=[], metavar="DIR",
                        help="directory searched for playbooks before the bundled ones "
                        "(repeatable)")
    parser.add_argument("--repeat", type=positive_count, default=1, metavar="N",
                        help="run each case N times (the spread over the repeats is shown; "
                        "default: 1)")
    parser.add_argument("--concurrency", type=positive_count, default=4, metavar="N",
                        help="cases run at once on a model that allows it (the local model "
                        "runs one at a time; default: 4)")
    parser.add_argument("--tag", action="append", default=[], metavar="TAG",
                        help="only the cases with this tag (repeatable: any of them)")
    parser.add_argument("--judge", metavar="SPEC",
                        help="the model that judges the cases' rubrics (without it rubrics "
                        "are not judged)")
    parser.add_argument("--json", metavar="FILE", help="write the run as JSON to FILE")
    parser.add_argument("--junit", metavar="FILE", help="write the run as JUnit XML to FILE")
    parser.add_argument(
        "--baseline", metavar="RUN",
        help="compare with a run (a stored run's id, `latest`, or a --json FILE): show what "
        "regressed and improved, and exit 1 on a regression",
    )
    parser.add_argument("--runs", metavar="DIR",
                        help="where runs are stored (default: .sea/evals beside the project "
                        "file, else the data directory's evals/)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress lines while the cases run")
    add_budget_arguments(parser)
    add_limit_argument(parser)
    parser.set_defaults(func=eval_command)


def eval_command(args: argparse.Namespace) -> int:
    """Handler of ``sea eval``: 0, or 1 when a case regressed against ``--baseline``."""
    runs_dir = runs_directory(args)
    baseline = load_run(args.baseline, runs_dir) if args.baseline else None
    cases = _chosen(load_sets(args.sets, limit=file_limit(CONFIG_FILES)), args.tag)
    library = PlaybookLibrary.bundled(search_dirs(args.playbooks))
    _check_playbooks(cases, library)
    specs = [args.model] if isinstance(args.model, str) else args.model or ["local"]
    setups = [_setup(args, spec, library) for spec in specs]
    judge = _judge(args)
    run: dict[str, Any] = {
        "id": new_id(), "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "sets": [str(s) for s in args.sets], "repeat": args.repeat, "judge": args.judge,
        "cases": len(cases), "models": {},
        "case_specs": {c.key: {"turns": list(c.turns), "playbook": c.playbook,
                               "expect": dict(c.expect), "tags": list(c.tags)} for c in cases},
    }
    for setup in setups:
        if judge is not None:
            setup = _with_judge(setup, judge, args.judge)
        progress = Progress(setup.label, len(cases) * args.repeat, quiet=args.quiet)
        attempts = asyncio.run(run_cases(setup, cases, args.repeat, progress.step))
        progress.done()
        labels = {c.key: [*c.tags, *([f"lang:{c.lang}"] if c.lang else [])] for c in cases}
        run["models"][setup.label] = summary = summarize(attempts, args.repeat, labels)
        show_model(setup.label, summary)
    stored = save_run(run, runs_dir)
    _write(args, run)
    print(f"run {run['id']} stored in {stored}")
    if baseline is None:
        return 0
    changes, notes = compare(baseline, run)
    return 1 if show_changes(str(baseline.get("id", args.baseline)), changes, notes) else 0


def runs_directory(args: argparse.Namespace) -> Path:
    """Where runs are stored: ``--runs`` (or the project's ``eval.runs``), else the project's
    state directory (``.sea/evals`` beside its file, where ``sea init`` keeps the store),
    else the data directory's ``evals``."""
    if args.runs:
        return Path(args.runs).expanduser()
    project = project_file(getattr(args, "project", None), getattr(args, "no_project", False),
                           os.environ, Path.cwd())
    return project.parent / ".sea" / "evals" if project is not None else data_dir() / "evals"


def _chosen(cases: list[EvalCase], tags: list[str]) -> list[EvalCase]:
    if not tags:
        return cases
    chosen = [c for c in cases if set(c.tags) & set(tags)]
    if not chosen:
        raise UsageError(f"--tag {', '.join(tags)}: no case has it; the cases' tags are "
                         f"{', '.join(sorted({t for c in cases for t in c.tags})) or 'none'}")
    return chosen


def _check_playbooks(cases: list[EvalCase], library: PlaybookLibrary) -> None:
    """Every entry playbook exists and is valid before anything runs."""
    for name in sorted({c.playbook for c in cases}):
        case = next(c for c in cases if c.playbook == name)
        try:
            library.get(name)
        except Exception as exc:
            raise UsageError(f"{case.file}:{case.line}: case {case.id!r}: playbook {name!r} "
                             f"cannot be used: {exc}") from None


def _setup(args: argparse.Namespace, spec: str, library: PlaybookLibrary) -> Setup:
    def make() -> ModelSet:
        return chat_models(spec, None, args.model_option, (), args.structured_method)

    first = make()  # a model that cannot be made fails here, before anything runs
    fresh = spec.startswith(_FRESH)
    serial = spec.split(":", 1)[0] in _SERIAL
    return Setup(
        label=spec, models=make if fresh else (lambda: first), library=library,
        limits=limits_of(args, budget=budget_of(args)), llm=llm_options_of(args),
        concurrency=1 if serial else args.concurrency,
    )


def _judge(args: argparse.Namespace) -> Callable[[], BaseChatModel] | None:
    if args.judge is None:
        return None
    spec = args.judge

    def make() -> BaseChatModel:
        return chat_models(spec, None).normal

    first = make()
    return make if spec.startswith(_FRESH) else (lambda: first)


def _with_judge(setup: Setup, judge: Callable[[], BaseChatModel], spec: str) -> Setup:
    serial = spec.split(":", 1)[0] in _SERIAL
    return Setup(setup.label, setup.models, setup.library, setup.limits, setup.llm, judge,
                 1 if serial else setup.concurrency)


def _write(args: argparse.Namespace, run: dict[str, Any]) -> None:
    outputs: list[tuple[str | None, Callable[[], bytes]]] = [
        (args.json, lambda: orjson.dumps(run, option=orjson.OPT_INDENT_2)),
        (args.junit, lambda: junit(run)),
    ]
    for target, data in outputs:
        if target is None:
            continue
        try:
            Path(target).expanduser().write_bytes(data())
        except OSError as exc:
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
        print(f"wrote {target}", file=sys.stderr)
