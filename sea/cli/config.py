"""``sea config [COMMAND [OPTION...]]``: the settings a command would use, each with its
value and where it comes from (a flag, a ``SEA_*`` environment variable, the project file
and its line, or the default).

Nothing is run and nothing is made: ``sea config run --db x.sqlite`` shows what ``sea run
--db x.sqlite`` would use. A secret is shown as the environment variable the project file
names (``{"env": "OPENAI_API_KEY"}``), one given as a flag as hidden: never its value.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from sea.cli._project.resolve import Resolution, add_project_arguments
from sea.errors import UsageError

DEFAULT_COMMAND = "run"


def register(subparsers: Any) -> None:
    """Add ``sea config``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "config", help="show a command's settings and where each comes from",
        description="Show the settings a command would use: from its flags, else SEA_* "
        "environment variables, else the project file (sea.toml, or [tool.sea] in "
        "pyproject.toml, found from the current directory upward), else the defaults.",
    )
    add_project_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "words", nargs=argparse.REMAINDER, metavar="COMMAND [OPTION...]",
        help=f"the command and its options (default: {DEFAULT_COMMAND}), e.g. run --db x.sqlite",
    )
    parser.set_defaults(func=config_command)


def config_command(args: argparse.Namespace) -> int:
    """Handler of ``sea config``."""
    resolution = resolution_of(args)
    if args.json:
        import orjson

        print(orjson.dumps(to_json(resolution)).decode())
        return 0
    _print(resolution)
    return 0


def resolution_of(args: argparse.Namespace) -> Resolution:
    """The settings of the command ``args.words`` names, as it would resolve them.

    Raises:
        UsageError: the command does not exist or takes no setting.
    """
    from sea.cli import _subcommand_modules, build_parser
    from sea.cli._project.resolve import prepare, resolve

    words = list(args.words) or [DEFAULT_COMMAND]
    if words[0] not in _subcommand_modules():
        raise UsageError(f"sea config {words[0]}: no such command (see sea --help)")
    parser = build_parser(only=words[0])
    slots = prepare(parser, lenient=True)
    inner = parser.parse_args(words)
    if getattr(inner, "project", None) is None and not getattr(inner, "no_project", False):
        inner.project, inner.no_project = args.project, args.no_project
    resolution = resolve(inner, slots, os.environ, Path.cwd(), strict=False)
    if resolution is None:
        commands = sorted(c for c in slots if c.startswith(words[0]))
        hint = f"; give one of: {', '.join(commands)}" if commands else ""
        raise UsageError(f"sea {' '.join(words[:2])} takes no project setting{hint}")
    return resolution


def to_json(resolution: Resolution) -> dict[str, Any]:
    """The machine-readable form: the project file, the command, and per setting its
    option, environment variable, value and source."""
    return {
        "project": None if resolution.project is None else str(resolution.project),
        "command": resolution.command,
        "settings": {
            r.setting.key: {"option": r.option, "env": r.setting.env, "value": r.value,
                            "source": r.source}
            for r in resolution.settings
        },
    }


def _print(resolution: Resolution) -> None:
    import orjson
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from sea.cli._text import printable

    console = Console(highlight=False)
    if not console.is_terminal:  # piped: wide enough for every column
        console = Console(highlight=False, width=200)
    project = "none" if resolution.project is None else str(resolution.project)
    console.print(Text(printable(f"sea {resolution.command}; project file: {project}")))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header in ("setting", "option", "value", "source"):
        table.add_column(header, overflow="fold")
    for r in resolution.settings:
        value = "-" if r.value is None else r.value if isinstance(r.value, str) \
            else orjson.dumps(r.value).decode()
        if r.setting.key == "db" and r.value is None:
            from sea.cli._setup import default_db

            value = f"{default_db()} (the per-user store)"
        table.add_row(Text(r.setting.key), Text(r.option), Text(printable(value)),
                      Text(printable(r.source)))
    console.print(table)
