"""Reading playbook files: only regular files of a bounded size, and directory scans that
leave the others out with a warning. Light on purpose (no document models, no validators):
``sea validate`` reads its files before it knows whether anything needs checking."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Final

from sea.errors import Diagnostic, PlaybookError, Severity
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


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_playbook_bytes(path: Path, *, limit: int = MAX_PLAYBOOK_BYTES) -> bytes:
    """The bytes of a playbook file, read only if it is a regular file (a symlink is followed
    only to one) of at most ``limit`` bytes: a FIFO, a device (``/dev/zero``) or a socket
    named ``*.json`` is never opened for a blocking read, and no more than ``limit + 1``
    bytes are ever read.

    Raises:
        PlaybookError: with one error diagnostic: ``SEA001`` (missing or unreadable),
            ``SEA006`` (not a regular file) or ``SEA007`` (larger than ``limit``).
    """
    try:
        info = os.stat(path)
    except FileNotFoundError as exc:
        if os.path.islink(path):
            raise _not_read(path, codes.FILE_UNREADABLE,
                            f"the file is a symbolic link to {os.readlink(path)}, which does "
                            "not exist", "fix or remove the link") from None
        raise PlaybookError([unreadable(path, exc)]) from None
    except OSError as exc:
        raise PlaybookError([unreadable(path, exc)]) from None
    if not stat.S_ISREG(info.st_mode):
        raise _not_read(path, codes.NOT_A_FILE,
                        f"the path is {_kind(info.st_mode)}, not a regular file; it was not read",
                        "a playbook is a regular .json file")
    if info.st_size > limit:
        raise _too_large(path, f"{info.st_size:,} bytes", limit)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise PlaybookError([unreadable(path, exc)]) from None
    try:
        opened = os.fstat(fd)  # the file may have been swapped since the first look
        if not stat.S_ISREG(opened.st_mode):
            raise _not_read(path, codes.NOT_A_FILE,
                            f"the path is {_kind(opened.st_mode)}, not a regular file; "
                            "it was not read", "a playbook is a regular .json file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise PlaybookError([unreadable(path, exc)]) from None
    finally:
        os.close(fd)
    if size > limit:  # it grew after the first look
        raise _too_large(path, f"more than {limit:,} bytes", limit)
    return b"".join(chunks)


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
