"""Reading playbook files: only regular files of a bounded size, and directory scans that
leave the others out with a warning. Light on purpose (no document models, no validators):
``sea validate`` reads its files before it knows whether anything needs checking."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Final

from sea.errors import Diagnostic, PlaybookError, PlaybookFileNotFound, Severity
from sea.jsonfile import FileTooLarge, NotARegularFile, read_regular
from sea.lang import codes
from sea.lang.hints import suggest

MAX_PLAYBOOK_BYTES: Final = 1024 * 1024
"""The largest playbook file that is read: 1 MiB (the bundled playbooks are a few KiB).
A larger file is not read; it is reported as ``SEA007`` (an error when the file was named,
a warning when a directory scan skipped it)."""


def _missing_hint(path: Path) -> str | None:
    """``did you mean `x.json`?`` from the files beside a missing one, if one is close."""
    try:
        siblings = [p.name for p in path.parent.iterdir() if p.suffix == ".json"]
    except OSError:
        return None
    return suggest(path.name, siblings).strip() or None


def unreadable(path: Path, exc: OSError) -> Diagnostic:
    """The diagnostic for a file that cannot be read."""
    missing = isinstance(exc, FileNotFoundError)
    reason = "does not exist" if missing else f"cannot be read ({exc.strerror or exc})"
    return Diagnostic(
        code=codes.FILE_UNREADABLE,
        severity=Severity.ERROR,
        message=f"the file {reason}",
        file=str(path),
        hint=_missing_hint(path) if missing else None,
    )


def _not_read(path: Path, code: str, message: str, hint: str) -> PlaybookError:
    return PlaybookError([
        Diagnostic(code=code, severity=Severity.ERROR, message=message, file=str(path), hint=hint)
    ])


def read_playbook_bytes(path: Path, *, limit: int = MAX_PLAYBOOK_BYTES) -> bytes:
    """The bytes of a playbook file, read only if it is a regular file (a symlink is followed
    only to one) of at most ``limit`` bytes: a FIFO, a device (``/dev/zero``) or a socket
    named ``*.json`` is never opened for a blocking read, and no more than ``limit + 1``
    bytes are ever read (:func:`sea.jsonfile.read_regular`).

    Raises:
        PlaybookError: with one error diagnostic: ``SEA001`` (missing: a
            :class:`~sea.errors.PlaybookFileNotFound`, or unreadable),
            ``SEA006`` (not a regular file) or ``SEA007`` (larger than ``limit``).
    """
    try:
        return read_regular(path, limit)
    except NotARegularFile as exc:
        raise _not_read(path, codes.NOT_A_FILE,
                        f"the path is {exc.kind}, not a regular file; it was not read",
                        "a playbook is a regular .json file") from None
    except FileTooLarge as exc:
        raise _too_large(path, exc.shown, limit) from None
    except FileNotFoundError as exc:
        if os.path.islink(path):
            raise PlaybookFileNotFound([Diagnostic(
                code=codes.FILE_UNREADABLE, severity=Severity.ERROR,
                message=f"the file is a symbolic link to {os.readlink(path)}, which does not "
                "exist", file=str(path), hint="fix or remove the link")]) from None
        raise PlaybookFileNotFound([unreadable(path, exc)]) from None
    except OSError as exc:
        raise PlaybookError([unreadable(path, exc)]) from None


def _too_large(path: Path, shown: str, limit: int) -> PlaybookError:
    return _not_read(path, codes.FILE_TOO_LARGE,
                     f"the file is {shown}, larger than the {limit:,}-byte limit for a "
                     "playbook; it was not read",
                     "a playbook is small; split it into playbooks that call each other")


def skipped(diagnostic: Diagnostic) -> Diagnostic:
    """A file a directory scan leaves out: the reason as a warning (the file was not named,
    so it fails the scan only with ``--strict``)."""
    message = diagnostic.message.removesuffix("; it was not read")
    return replace(diagnostic, severity=Severity.WARNING, message=f"{message}; skipped")


def scan_directory(directory: Path) -> tuple[list[tuple[Path, bytes]], list[Diagnostic]]:
    """The ``*.json`` files of ``directory`` (not recursive), sorted, with their bytes; and a
    warning for each entry left out (not a regular file, too large, unreadable). A directory
    that does not exist or cannot be listed has no files."""
    found: list[tuple[Path, bytes]] = []
    left_out: list[Diagnostic] = []
    try:
        paths = sorted(directory.glob("*.json")) if directory.is_dir() else []
    except OSError:
        paths = []
    for path in paths:
        try:
            found.append((path, read_playbook_bytes(path)))
        except PlaybookError as exc:
            left_out.extend(skipped(d) for d in exc.diagnostics)
    return found, left_out
