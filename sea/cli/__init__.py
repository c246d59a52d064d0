"""The ``sea`` command: one module per subcommand, each with a ``register`` function.

Every public module of this package is a subcommand: its ``register(subparsers)`` adds a
parser and sets ``func`` (``args -> exit code``).
Errors the engine and the store raise on purpose (:class:`sea.errors.SeaError`,
:class:`saimemory.errors.MemoryStoreError`) become a clean message and a non-zero exit
here, never a traceback; their text may quote a model, a tool or a file, so its control
characters are made visible (:func:`sea.cli._text.printable`).

Exit codes, the same for every command: 0 done; 1 the work ran (or the files were checked)
and failed (a pulse ended in error, a playbook has errors, the store refused); 2 the command
could not start (a bad option, a file, directory or playbook that does not exist, a model
that cannot be created); 130 interrupted. A closed output pipe (``sea ... | head``) ends the
command quietly.
"""

from __future__ import annotations

import argparse
import gc
import os
import pkgutil
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path
from typing import NoReturn

from saimemory.errors import MemoryStoreError
from sea.cli._commands import COMMANDS
from sea.cli._flags import SeaParser
from sea.cli._text import printable
from sea.errors import EvalSetError, PlaybookError, ProjectFileError, SeaError, UsageError


def _subcommand_modules() -> list[str]:
    """Modules of ``sea.cli`` that provide a subcommand (every non-underscore module)."""
    return sorted(
        info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")
    )


Handler = Callable[[argparse.Namespace], int]


def build_parser(only: str | None = None, *, lazy: bool = False) -> argparse.ArgumentParser:
    """The argument parser; with ``only`` naming a subcommand, only that one is registered.

    Loading one subcommand keeps start-up fast: ``sea validate`` never imports the engine.
    ``lazy`` lists the other commands from :data:`sea.cli._commands.COMMANDS` without
    importing them (``sea --help``, ``sea rnu``: no command module is imported at all).
    """
    parser = SeaParser(
        prog="sea", description="SEA: a declarative playbook runtime for AI personas."
    )
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = _subcommand_modules()
    for name in names if lazy or only not in names else [only]:
        if lazy and name != only:
            sub.add_parser(name, help=COMMANDS.get(name), add_help=False)
        else:
            import_module(f"sea.cli.{name}").register(sub)
    return parser


class _Version(argparse.Action):
    """``--version``: SEA's version, ``sea.__version__`` (the build reads it there too;
    reading the installed package's metadata would cost a start-up more than parsing its
    arguments)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"sea {_version()}")
        parser.exit()


def _version() -> str:
    from sea import __version__

    return __version__


YOUNG_COLLECTION_PACE = 50_000
"""Allocations between two collections of the young generation in a ``sea`` process
(Python's default is 700; see :func:`console`)."""


def console() -> NoReturn:
    """Entry point of the console script and of ``python -m sea``: :func:`main`, then the
    process ends with its exit code.

    The garbage collector runs at a process's pace, not a library's: importing pydantic and
    SEA's modules and building the document models allocates tens of thousands of objects
    that all stay alive, and at Python's pace the collector walks them again and again for
    nothing. Young objects are collected every :data:`YOUNG_COLLECTION_PACE` allocations
    instead (garbage is still collected, later). At the end the objects still alive are
    frozen (:func:`gc.freeze`), so that the interpreter's shutdown does not walk them once
    more. Together, a fifth of a cold ``sea validate``. Commands close what they open
    (files, stores) before they return.
    """
    gc.set_threshold(YOUNG_COLLECTION_PACE, *gc.get_threshold()[1:])
    code = main()
    gc.freeze()
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # inside the guard: a reader that went away is not an error
        return code
    except BrokenPipeError:  # the reader went away (`sea ... | head`): stop quietly
        _silence_stdout()
        return 0


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (captured): nothing to do
        pass


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    command = next((w for w in words if not w.startswith("-")), None)
    if command is None and words and words[0] == "--version":
        print(f"sea {_version()}")  # without registering (importing) every subcommand
        return 0
    if command is not None and command not in COMMANDS:
        return _unknown(command)
    from sea.cli._project.resolve import prepare, resolve

    parser = build_parser(only=command, lazy=True)
    slots = prepare(parser)
    args = parser.parse_args(words)
    func: Handler | None = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        resolve(args, slots, os.environ, Path.cwd())
        return func(args)
    except (ProjectFileError, EvalSetError) as exc:  # diagnostics: their own codes, places
        print(printable(f"sea: {exc}"), file=sys.stderr)
        return 2
    except UsageError as exc:
        print(printable(f"sea: {exc.code} error: {exc.message}"), file=sys.stderr)
        return 2
    except PlaybookError as exc:  # its diagnostics name their own codes
        print(printable(f"sea: {exc}"), file=sys.stderr)
        return 2 if isinstance(exc, LookupError) else 1  # a file that does not exist: 2
    except SeaError as exc:
        print(printable(f"sea: {exc.code} error: {exc}"), file=sys.stderr)
        return 2 if isinstance(exc, LookupError) else 1  # a name that does not exist: 2
    except MemoryStoreError as exc:  # the store cannot be opened or used
        print(printable(f"sea: {exc.code} error: {exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("sea: interrupted", file=sys.stderr)
        return 130


def _unknown(command: str) -> int:
    """A command that does not exist (``sea rnu``): the usage, what was meant, exit 2."""
    from sea.lang.hints import suggest

    print("usage: sea [-h] [--version] COMMAND ...", file=sys.stderr)
    print(printable(f"sea: error: no command {command!r}; {suggest(command, COMMANDS)}"
                    f"the commands are {', '.join(COMMANDS)} (sea --help)"), file=sys.stderr)
    return 2
