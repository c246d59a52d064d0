"""``sea replay FILE``: run a recorded pulse again offline and report the first divergence.

The report quotes recorded model answers and tool results: it is printed with their control
characters made visible (``--json`` prints JSON)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from saimemory.base import DEFAULT_BUDGET
from sea.cli._filelimits import file_limit
from sea.cli._text import printable
from sea.errors import UsageError
from sea.jsonfile import TRACE_FILES
from sea.jsontypes import json_text
from sea.lang.library import PlaybookLibrary
from sea.trace.replay import ReplayReport, areplay, load_trace


def register(subparsers: Any) -> None:
    """Add ``sea replay``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "replay", help="replay a recorded pulse offline and compare it with the recording"
    )
    parser.add_argument("trace", metavar="TRACE",
                        help="trace file written by `sea run --record` (at most "
                        f"{TRACE_FILES.max_bytes // 2**20} MiB; ${TRACE_FILES.setting} "
                        "raises it)")
    parser.add_argument(
        "--playbooks", action="append", default=None, metavar="DIR",
        help="directory searched for playbooks before the bundled ones (repeatable; default: "
        "the directories recorded in the trace that still exist)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=replay_command)


def replay_command(args: argparse.Namespace) -> int:
    """Handler of ``sea replay``: exit 0 when the replay matched, 1 when it diverged."""
    if not Path(args.trace).exists():
        raise UsageError(f"the trace {args.trace} does not exist (sea run --record FILE "
                         "writes one)")
    trace = load_trace(Path(args.trace), limit=file_limit(TRACE_FILES))
    library = PlaybookLibrary.bundled(_playbook_dirs(args.playbooks, trace.playbook_dirs))
    report = asyncio.run(areplay(trace, library, budget=DEFAULT_BUDGET))
    if args.json:
        sys.stdout.write(json_text(_report_json(report)) + "\n")
    else:
        sys.stdout.write(printable(_report_text(report)) + "\n")
    return 0 if report.matched else 1


def _playbook_dirs(given: list[str] | None, recorded: list[str]) -> list[Path]:
    """The ``--playbooks`` directories, else the recorded ones that still exist.

    Raises:
        UsageError: a ``--playbooks`` entry is not a directory.
    """
    if given is not None:
        for directory in given:
            if not Path(directory).is_dir():
                raise UsageError(f"--playbooks {directory}: not a directory")
        return [Path(d) for d in given]
    for directory in recorded:
        if not Path(directory).is_dir():
            print(
                printable(f"sea: note: the recorded playbook directory {directory} does not "
                          "exist; its playbooks are looked up in the others (give --playbooks "
                          "DIR to choose)"),
                file=sys.stderr,
            )
    return [Path(d) for d in recorded if Path(d).is_dir()]


def _report_json(report: ReplayReport) -> dict[str, Any]:
    return {
        "matched": report.matched,
        "divergence": report.divergence.to_json() if report.divergence else None,
        "changed_playbooks": {
            name: {"recorded": old, "current": new}
            for name, (old, new) in report.changed_playbooks.items()
        },
        "nodes": len(report.actual.nodes),
        "llm_calls": len(report.actual.llm_calls),
    }


def _report_text(report: ReplayReport) -> str:
    lines = [
        f"note: playbook {name} changed since the recording"
        for name in report.changed_playbooks
    ]
    if report.divergence is None:
        lines.append(
            f"replay matched: {len(report.actual.nodes)} nodes, "
            f"{len(report.actual.llm_calls)} model calls, "
            f"{len(report.actual.tool_calls)} tool calls"
        )
    else:
        lines.append(report.divergence.describe())
        failed = report.actual.error
        if failed and failed != report.expected.error:
            lines.append(f"the replayed pulse failed: {failed.get('code')} {failed.get('message')}")
    return "\n".join(lines)
