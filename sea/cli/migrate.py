"""``sea migrate PATH... [--write]``: rewrite SAIVerse-format playbooks into explicit SEA form.

Prints a unified diff per file that would change (stdout, so it can be piped to ``patch``);
with ``--write`` the files are rewritten in place, their layout kept (see
:mod:`sea.lang.migrate`). A file that is not valid JSON or not a playbook is reported with
its location on stderr and left alone; the other files are still migrated.

Exit status: 0 when every file was migrated (or needed nothing), 1 when a file could not be
migrated or written, 2 when a named path does not exist. Like ``sea validate``, it never
imports the engine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sea.errors import Diagnostic


def register(subparsers: Any) -> None:
    """Add the ``migrate`` subcommand."""
    parser = subparsers.add_parser(
        "migrate",
        help="rewrite SAIVerse-format playbooks into explicit SEA form",
        description="Rewrite SAIVerse-format playbooks into explicit SEA form: implicit "
        "arguments and variables declared, SAIVerse-only spellings replaced. Prints a diff "
        "per file; nothing is written without --write. Called playbooks are looked up in "
        "the given directories (and the files' directories), then the bundled ones.",
    )
    parser.add_argument("paths", nargs="*", default=None, metavar="PATH", type=Path,
                        help="file or directory (default: the project file's playbooks "
                        "directories)")
    parser.add_argument(
        "--write", action="store_true", help="rewrite the files in place (keeping their layout)"
    )
    parser.set_defaults(func=run)


def _files(paths: list[Path]) -> tuple[list[tuple[Path, bytes]], list[Path], list[Diagnostic]]:
    """The files to migrate with their bytes, the directories to look callees up in, and
    why some files were not read."""
    from sea.cli._text import printable_name
    from sea.errors import PlaybookError
    from sea.lang.files import read_playbook_bytes, scan_directory

    files: list[tuple[Path, bytes]] = []
    dirs: list[Path] = []
    unread: list[Diagnostic] = []
    for path in paths:
        if path.is_dir():
            found, left_out = scan_directory(path)
            files.extend(found)
            unread.extend(left_out)
            dirs.append(path)
            if not found and not left_out:
                print(f"sea: note: no playbooks (*.json) in {printable_name(str(path))}",
                      file=sys.stderr)
            continue
        try:
            files.append((path, read_playbook_bytes(path)))
        except PlaybookError as exc:
            unread.extend(exc.diagnostics)
        dirs.append(path.parent)
    return files, dirs, unread


def _write(path: Path, data: bytes) -> None:
    """Put the migrated bytes in the file ``path`` names, keeping its permissions.

    A symbolic link is written through: its target gets the new content and the link stays.
    A file with one name is replaced atomically (a temporary file renamed over it); a file
    with hard links is rewritten in place, so that every name keeps seeing the one file
    (a rename would give this name a new file and leave the others the old text).
    """
    target = Path(os.path.realpath(path))
    info = target.stat()
    if info.st_nlink > 1:
        with open(target, "r+b") as out:
            out.write(data)
            out.truncate()
            out.flush()
            os.fsync(out.fileno())
        return
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(name, info.st_mode & 0o7777)
        os.replace(name, target)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
    """Handler of ``sea migrate``."""
    from sea.cli._text import printable, printable_name
    from sea.errors import Severity, UsageError
    from sea.lang.library import PlaybookLibrary
    from sea.lang.migrate import migrate_text

    if not args.paths:
        raise UsageError("name the playbook files or directories to migrate (sea migrate "
                         "PATH...), or give the project file `playbooks` directories")
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise UsageError("no such file or directory: " + ", ".join(map(printable_name, missing)))
    files, dirs, unread = _files(args.paths)
    context = PlaybookLibrary.bundled(dict.fromkeys(dirs)).context()
    failed = sum(d.severity is Severity.ERROR for d in unread)
    for diagnostic in unread:
        shown = replace(diagnostic, file=diagnostic.file and printable_name(diagnostic.file))
        print(printable(shown.format_human()), file=sys.stderr)
    changed = 0
    for path, data in files:
        migration = migrate_text(data, file=printable_name(str(path)), context=context)
        for diagnostic in migration.diagnostics:
            print(printable(diagnostic.format_human()), file=sys.stderr)
        if migration.failed:
            failed += 1
            continue
        if not migration.changed:
            continue
        changed += 1
        sys.stdout.write(migration.diff())
        if args.write:
            try:
                _write(path, migration.data())
            except OSError as exc:
                print(printable(f"sea: {printable_name(str(path))}: cannot write: "
                                f"{exc.strerror or exc}"), file=sys.stderr)
                failed += 1
    verb = "rewritten" if args.write else "would change"
    print(
        f"{len(files)} file{'s' if len(files) != 1 else ''} checked: {changed} {verb}, "
        f"{failed} could not be migrated",
        file=sys.stderr,
    )
    return 1 if failed else 0
