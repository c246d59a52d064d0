"""``sea validate PATH...``: check playbook files and directories, report like a compiler.

Exit status: 0 when there are no errors (and, with ``--strict``, no warnings), 1 when there
are, 2 on a usage error or a named file that does not exist (its diagnostic is reported with
the others). Without a ``PATH``, the project file's ``playbooks`` directories are checked,
and its ``tools`` and ``mcp`` are the tools known (as for every setting, a flag, then a
``SEA_*`` variable, comes first). Heavy modules are imported only when the command runs.

Only regular files of at most ``sea.lang.files.MAX_PLAYBOOK_BYTES`` are read (a symlink is
followed only to a regular file). In a directory, other ``*.json`` entries (a FIFO, a device,
an oversized file) are skipped with a warning; a file named on the command line that cannot
be read is an error. Every file is checked on its own: a bad one never stops the others.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sea.cli._flags import Renamed

if TYPE_CHECKING:
    from sea.errors import Diagnostic
    from sea.lang.checks import ToolCatalogue

def register(subparsers: Any) -> None:
    """Add the ``validate`` subcommand."""
    parser = subparsers.add_parser(
        "validate",
        help="check playbooks (schema and static checks)",
        description="Check playbook files and directories of playbooks. Called playbooks are "
        "looked up in the given directories (and the files' directories), then the bundled ones.",
    )
    parser.add_argument(
        "paths", nargs="*", default=None, metavar="PATH", type=Path,
        help="file or directory (default: the project file's playbooks directories)")
    parser.add_argument(
        "--json", action="store_true",
        help="print the diagnostics as a JSON list of objects (default: one per line with a "
        "hint)",
    )
    parser.add_argument("--format", action=Renamed, new="--json", dest="json",
                        choices=("human", "json"), convert=lambda word: word == "json")
    parser.add_argument(
        "--strict", action="store_true",
        help="warnings fail too, and without --tools only the built-in tools are known",
    )
    parser.add_argument(
        "--tools", action="append", default=[], metavar="SOURCE",
        help="the host's tools, so that unknown tools and bad arguments become errors: a "
        "JSON tool catalogue (FILE.json: names and argument schemas) or a Python module "
        "(MODULE[:ATTR], as for sea run) (repeatable)",
    )
    parser.add_argument(
        "--mcp", action="append", default=[], metavar="CONFIG.json",
        help="the tools of the MCP servers CONFIG.json names (as for sea run; each server "
        "is started to list its tools) (repeatable)",
    )
    parser.add_argument(
        "--no-cache", action="store_true",
        help="check everything again: without it, the verdict of an unchanged set of "
        "playbooks, options, catalogues and SEA is read from $SEA_CACHE_DIR/validate (else "
        "the user's cache directory); never with --mcp or tools from a Python module",
    )
    parser.set_defaults(func=run)


@dataclass
class _Plan:
    files: list[tuple[Path, bytes]] = field(default_factory=list)
    """Every file to check (named, or found in a named directory), with its bytes."""
    dirs: list[Path] = field(default_factory=list)
    scanned: set[Path] = field(default_factory=set)
    """The named directories: every playbook in them is among :attr:`files` already."""
    empty: list[Path] = field(default_factory=list)
    missing: list[Path] = field(default_factory=list)
    """The named files that do not exist (the command could not start: exit 2)."""
    unread: list[Diagnostic] = field(default_factory=list)
    """Why files were not read: errors for named files, warnings for directory entries."""


def _plan(paths: list[Path]) -> _Plan:
    from sea.errors import PlaybookError
    from sea.lang.files import read_playbook_bytes, scan_directory

    plan = _Plan()
    for path in paths:
        if path.is_dir():
            found, left_out = scan_directory(path)
            plan.dirs.append(path)
            plan.scanned.add(path)
            plan.files.extend(found)
            plan.unread.extend(left_out)
            if not found and not left_out:
                plan.empty.append(path)
            continue
        try:
            plan.files.append((path, read_playbook_bytes(path)))
        except PlaybookError as exc:
            plan.unread.extend(exc.diagnostics)
            if isinstance(exc, LookupError):  # the file does not exist
                plan.missing.append(path)
            continue
        plan.dirs.append(path.parent)
    return plan


def _catalogue(
    sources: list[str], configs: list[str], strict: bool = False
) -> ToolCatalogue | None:
    """The tools playbooks may call: the built-in ones, the ``--tools`` catalogues' and
    modules' and the ``--mcp`` servers'. Without any, tools are unchecked unless ``strict``
    (then only the built-in tools are known). The workspace and plan tools count as
    built-in: a host that gives a workspace has them. LangChain is imported only for a
    module or a server, never for a JSON catalogue."""
    from sea.lang.checks import ToolCatalogue

    if not sources and not configs and not strict:
        return None
    # the engine's tools' schemas as published (``make schemas``): building their argument
    # models here would cost more than checking every bundled playbook
    from sea.jsonfile import read_json
    from sea.resources import ENGINE_TOOLS_FILE, schemas_dir

    engine: dict[str, Mapping[str, Any] | None] = read_json(
        schemas_dir() / ENGINE_TOOLS_FILE, "catalogue of the engine's tools")
    if not sources and not configs:
        return ToolCatalogue(engine)
    # The engine's own tools count as known with any catalogue, with their real arguments.
    tools = dict(engine)
    for source in sources:
        if source.endswith(".json"):
            tools.update(_json_catalogue(Path(source)).tools)
    modules = [source for source in sources if not source.endswith(".json")]
    if modules or configs:
        from sea.cli._toolsources import tool_schemas

        tools.update(tool_schemas(modules, configs))
    return ToolCatalogue(tools)


def _json_catalogue(path: Path) -> ToolCatalogue:
    from sea.cli._filelimits import file_limit
    from sea.errors import UsageError
    from sea.host.mcp_config import SERVERS_KEYS
    from sea.jsonfile import CONFIG_FILES
    from sea.lang.checks import ToolCatalogue

    loaded = ToolCatalogue.load(path, limit=file_limit(CONFIG_FILES))
    if any(key in loaded.tools for key in SERVERS_KEYS):
        raise UsageError(
            f"--tools {path}: this is an MCP server configuration, not a tool catalogue; "
            "give it with --mcp"
        )
    return loaded


def _duplicates(results: list[tuple[Path, bytes, Any]]) -> list[Diagnostic]:
    from sea.errors import Diagnostic, Severity
    from sea.lang import codes
    from sea.lang.locate import Locator

    seen: dict[str, Path] = {}
    found = []
    for path, data, playbook in results:
        if playbook is None:
            continue
        if playbook.name in seen:
            line, column = Locator(data.decode("utf-8-sig")).position("/name")
            found.append(
                Diagnostic(
                    code=codes.DUPLICATE_PLAYBOOK,
                    severity=Severity.WARNING,
                    message=f"playbook `{playbook.name}` is also defined in {seen[playbook.name]}",
                    file=str(path),
                    pointer="/name",
                    line=line,
                    column=column,
                    hint="playbook names are unique; the first file found wins",
                )
            )
        else:
            seen[playbook.name] = path
    return found


def collect(
    paths: list[Path], tools: ToolCatalogue | None
) -> tuple[list[Diagnostic], _Plan]:
    """Every diagnostic of every file under ``paths`` (calls checked against ``tools``)."""
    plan = _plan(paths)
    return list(plan.unread) + _check(plan, tools), plan


def _check(plan: _Plan, tools: ToolCatalogue | None) -> list[Diagnostic]:
    """The diagnostics of the checks of ``plan``'s files (not of their reading)."""
    from sea.lang.library import PlaybookLibrary
    from sea.lang.loader import check_document

    library = PlaybookLibrary.bundled(dict.fromkeys(plan.dirs), tools=tools)
    context = library.context()
    diagnostics = []
    results = []
    for path, data in plan.files:
        result = check_document(data, file=str(path), context=context)
        diagnostics.extend(result.diagnostics)
        results.append((path, data, result.playbook))
    return diagnostics + _duplicates(results)


def cache_dir() -> Path:
    """Where verdicts are kept: ``$SEA_CACHE_DIR/validate``, else the user's cache
    directory's ``sea/validate``."""
    configured = os.environ.get("SEA_CACHE_DIR")
    if configured:
        return Path(configured) / "validate"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("sea")) / "validate"


def _key(plan: _Plan, args: argparse.Namespace) -> str | None:
    """The key of this run's verdict, or None when it is not kept: ``--no-cache``, tools
    from a Python module or an MCP server, or a catalogue that cannot be read (the checks
    then say why)."""
    from sea.cli._filelimits import file_limit
    from sea.cli._verdicts import verdict_key
    from sea.jsonfile import CONFIG_FILES, read_regular
    from sea.lang.files import scan_directory
    from sea.resources import bundled_playbooks_dir, schemas_dir

    if args.no_cache or args.mcp or any(not s.endswith(".json") for s in args.tools):
        return None
    catalogues = []
    limit = file_limit(CONFIG_FILES).max_bytes
    for source in args.tools:
        try:
            catalogues.append((source, read_regular(Path(source), limit)))
        except OSError:  # not a regular file, too large, unreadable: the checks say which
            return None
    library = [found for directory in dict.fromkeys(plan.dirs) if directory not in plan.scanned
               for found in scan_directory(directory)[0]]  # a named file's directory
    return verdict_key(plan.files, library, strict=args.strict, catalogues=catalogues,
                       data_dirs=[bundled_playbooks_dir(), schemas_dir()])


def run(args: argparse.Namespace) -> int:
    """Handler of ``sea validate``."""
    import orjson

    from sea.cli import _verdicts
    from sea.cli._text import printable
    from sea.errors import Severity

    if not args.paths:
        from sea.errors import UsageError

        raise UsageError("name the playbook files or directories to check (sea validate "
                         "PATH...), or give the project file `playbooks` directories")
    plan = _plan(args.paths)
    key = _key(plan, args)
    checked = None if key is None else _verdicts.load(cache_dir(), key)
    if checked is None:
        checked = _check(plan, _catalogue(args.tools, args.mcp, args.strict))
        if key is not None:
            _verdicts.store(cache_dir(), key, checked)
    diagnostics = list(plan.unread) + checked
    for directory in plan.empty:
        print(f"sea: note: no playbooks (*.json) in {directory}", file=sys.stderr)
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    warnings = len(diagnostics) - errors
    if args.json:
        sys.stdout.write(
            orjson.dumps([d.to_json() for d in diagnostics], option=orjson.OPT_INDENT_2).decode()
            + "\n"
        )
    else:
        for diagnostic in diagnostics:
            print(printable(diagnostic.format_human()))
        print(
            f"{len(plan.files)} file{'s' if len(plan.files) != 1 else ''} checked: "
            f"{errors} error{'s' if errors != 1 else ''}, "
            f"{warnings} warning{'s' if warnings != 1 else ''}",
            file=sys.stderr,
        )
    if plan.missing:
        return 2
    return 1 if errors or (args.strict and warnings) else 0
