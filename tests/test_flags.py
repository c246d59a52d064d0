"""One flag vocabulary (issue 44 item 6): every parser of every ``sea`` command compared
against one table, the old spellings still working, a long option with one dash caught,
and ``sea --help`` and a mistyped command answered without importing any command."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from sea.cli import build_parser, main
from sea.cli._commands import COMMANDS
from sea.cli._flags import Renamed
from sea.cli._project.resolve import parsers

VOCABULARY: dict[str, tuple[str, ...]] = {
    "allow_run": ("--allow-run",), "allow_system": ("--allow-system",),
    "allow_unpriced": ("--allow-unpriced",), "answer": ("--answer",),
    "approve": ("--approve",), "approver": ("--approver",), "args": ("--args",),
    "advise": ("--advise",), "history_tokens": ("--history-tokens",),
    "response_cache": ("--response-cache",),
    "ask_before": ("--ask-before",), "attempts": ("--attempts",),
    "busy_timeout": ("--busy-timeout",), "concurrency": ("--concurrency",), "db": ("--db",),
    "deny": ("--deny",), "dir": ("DIR",), "events": ("--events",), "every": ("--every",),
    "file": ("FILE",), "heartbeat": ("--heartbeat",), "ids": ("--ids",),
    "input": ("--input", "-i"), "json": ("--json",), "light_model": ("--light-model",),
    "light_model_option": ("--light-model-option",), "limit": ("--limit",),
    "match": ("--any",), "max_calls": ("--max-calls",), "max_cost": ("--max-cost",),
    "max_every": ("--max-every",), "max_tokens_in": ("--max-tokens-in",),
    "max_tokens_out": ("--max-tokens-out",), "mcp": ("--mcp",),
    "min_every": ("--min-every",), "model": ("--model",), "model_option": ("--model-option",),
    "name": ("--name",), "no_cache": ("--no-cache",), "no_project": ("--no-project",),
    "otel": ("--otel",), "output": ("--output", "-o"), "paths": ("PATH",),
    "persona": ("--persona",),
    "persona_file": ("--persona-file",), "pin_id": ("PIN_ID",), "plan_id": ("PLAN_ID",),
    "playbook": ("PLAYBOOK",), "playbooks": ("--playbooks",), "prices": ("--prices",),
    "project": ("--project",), "pulse_id": ("PULSE_ID",), "query": ("QUERY",),
    "quiet": ("--quiet",), "reason": ("--reason",), "record": ("--record",),
    "request": ("--request",), "retry_wait": ("--retry-wait",), "run_env": ("--run-env",),
    "run_wrapper": ("--run-wrapper",), "safety_rules": ("--safety-rules",),
    "schedule_id": ("SCHEDULE_ID",), "since": ("--since",),
    "stall_timeout": ("--stall-timeout",), "status": ("--status",), "strict": ("--strict",),
    "structured_method": ("--structured-method",), "tag": ("--tag",), "text": ("TEXT",),
    "thread": ("--thread",), "tick": ("--tick",), "tool_timeout": ("--tool-timeout",),
    "tools": ("--tools",), "trace": ("TRACE",), "until": ("--until",),
    "when_busy": ("--when-busy",), "when_preempted": ("--when-preempted",),
    "priority": ("--priority",), "words": ("COMMAND [OPTION...]",),
    "workspace": ("--workspace",), "write": ("--write",), "yes": ("--yes",),
    # sea eval
    "sets": ("SET",), "repeat": ("--repeat",), "judge": ("--judge",), "junit": ("--junit",),
    "baseline": ("--baseline",), "runs": ("--runs",),
    # sea serve
    "host": ("--host",), "port": ("--port",), "token_file": ("--token-file",),
    "keepalive": ("--keepalive",), "allow_host": ("--allow-host",),
    "cors_origin": ("--cors-origin",), "max_body": ("--max-body",),
    "request_timeout": ("--request-timeout",), "workers": ("--workers",),
    "log_ttl": ("--log-ttl",), "grace": ("--grace",), "access_log": ("--no-access-log",),
    "traces": ("--traces",), "evals": ("--evals",),
    # sea keys
    "key_name": ("NAME",), "role": ("--role",), "tenant": ("--tenant",),
    "personas": ("--personas",), "active": ("--active",), "key": ("ID|NAME",),
}
"""Each option's meaning (its destination) and its one spelling; a positional argument by
its metavar. A new option is added here, with the spelling the other commands use."""


def _options(tree: Iterable[tuple[str, argparse.ArgumentParser]]
             ) -> Iterator[tuple[str, argparse.Action]]:
    for command, parser in tree:
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                yield command, action


def _spelling(action: argparse.Action) -> tuple[str, ...]:
    return tuple(action.option_strings) or (str(action.metavar or action.dest),)


def problems(tree: Iterable[tuple[str, argparse.ArgumentParser]]) -> list[str]:
    """Where the parsers leave the vocabulary: an option spelled otherwise than the table
    says, a meaning the table lacks, an old spelling that is shown or names no option."""
    found = []
    for command, action in _options(tree):
        if isinstance(action, Renamed):
            shown = {s for _, a in _options([(command, _parser_of(tree, command))])
                     if not isinstance(a, Renamed) for s in _spelling(a)}
            if action.help != argparse.SUPPRESS or action.new.split()[0] not in shown:
                found.append(f"sea {command}: {action.option_strings} -> {action.new!r}")
            continue
        expected = VOCABULARY.get(action.dest)
        if expected != _spelling(action):
            found.append(f"sea {command}: {action.dest} is {_spelling(action)}, the other "
                         f"commands say {expected}")
    return found


def _parser_of(tree: Iterable[tuple[str, argparse.ArgumentParser]],
               command: str) -> argparse.ArgumentParser:
    return dict(tree)[command]


def test_every_command_spells_each_option_as_the_others_do() -> None:
    tree = list(parsers(build_parser()))
    assert len(tree) > 30  # every command and subcommand
    assert problems(tree) == []


def test_no_spelling_has_two_meanings() -> None:
    spellings = [s for dest, spelled in VOCABULARY.items() for s in spelled if s[0] == "-"]
    assert len(spellings) == len(set(spellings))


def test_the_comparison_finds_two_spellings_of_one_meaning() -> None:
    """What the vocabulary test would have said before: graph's --dir beside --playbooks."""
    graph = argparse.ArgumentParser()
    graph.add_argument("--dir", dest="dirs", action="append")
    run = argparse.ArgumentParser()
    run.add_argument("--playbooks", action="append")
    assert problems([("graph", graph), ("run", run)]) == [
        "sea graph: dirs is ('--dir',), the other commands say None"]
    shown = argparse.ArgumentParser()
    shown.add_argument("--playbooks", action="append")
    shown.add_argument("--dir", action=Renamed, new="--directories", dest="playbooks")
    assert problems([("graph", shown)]) == ["sea graph: ['--dir'] -> '--directories'"]


@pytest.mark.parametrize(("old", "new", "flag"), [
    (["graph", "--dir", "d", "x"], ["graph", "--playbooks", "d", "x"], "--dir"),
    (["schedule", "add", "--playbook", "meta_auto", "--every", "1h"],
     ["schedule", "add", "meta_auto", "--every", "1h"], "--playbook"),
    (["plan", "approve", "--ids", "1, 3"], ["plan", "approve", "--approve", "1,3"], "--ids"),
    (["plan", "approve", "--up-to", "low"], ["plan", "approve", "--approve", "low"],
     "--up-to"),
    (["validate", "--format", "json", "p"], ["validate", "--json", "p"], "--format"),
    (["validate", "--format", "human", "p"], ["validate", "p"], "--format"),
])
def test_an_old_spelling_works_and_names_the_new_one_once(
    old: list[str], new: list[str], flag: str, capsys: pytest.CaptureFixture[str],
) -> None:
    assert vars(build_parser().parse_args(old)) == vars(build_parser().parse_args(new))
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"sea: warning: {flag} is an old spelling; use ")


def test_old_spellings_are_not_in_help() -> None:
    for command in ("graph", "validate"):
        text = build_parser(command).format_help()
        assert "--dir" not in text and "--format" not in text


def test_schedule_add_without_a_playbook_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["schedule", "add", "--every", "1h", "--db", "postgresql://nowhere/x"]) == 2
    assert "sea schedule add PLAYBOOK --every INTERVAL" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["run", "-input", "hi"], ["run", "-input=hi"],
                                  ["graph", "-playbooks", "d", "x"], ["-help"]])
def test_a_long_option_with_one_dash_is_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    word = argv[-1] if argv == ["-help"] else argv[1].partition("=")[0]
    assert f"{word}: a long option takes two dashes; did you mean -{word}?" in \
        capsys.readouterr().err


def test_a_short_option_with_its_value_attached_still_works() -> None:
    args = build_parser().parse_args(["run", "-ihello"])
    assert args.input == "hello"


def test_the_command_table_is_the_modules_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {choice.dest: choice.help for choice in sub._choices_actions} == COMMANDS


def test_a_missing_playbook_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    missing = str(tmp_path / "missing.json")
    assert main(["run", missing, "--input", "hi", "--no-project",
                 "--db", str(tmp_path / "m.sqlite")]) == 2
    assert "SEA001 error: the file does not exist" in capsys.readouterr().err
    assert main(["graph", missing]) == 2
    assert main(["validate", "--no-cache", missing]) == 2
    assert main(["replay", missing]) == 2


HEAVY = ("langchain_core", "langgraph", "sea.engine", "sea.host", "sea.llm", "pydantic",
         "sea.cli.run")

_PROBE = """
import sys, time
from sea.cli import main
codes = []
for argv in (["--help"], ["rnu"]):
    try:
        codes.append(main(argv))
    except SystemExit as stop:
        codes.append(stop.code)
heavy = sorted(name for name in sys.modules if name.startswith(HEAVY))
print(codes, heavy, file=sys.stderr)
"""


def test_help_and_a_mistyped_command_import_no_command() -> None:
    """``sea --help`` and ``sea rnu`` list the commands from a table: no command module, no
    LangChain, no engine is imported (the figures are in the report of issue 44)."""
    done = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{_PROBE}"], capture_output=True,
        text=True, timeout=60, check=False)
    assert done.stderr.strip().splitlines()[-1] == "[0, 2] []"
    assert "did you mean `run`?" in done.stderr
    assert "worker    run queued pulses" in done.stdout
