"""Reading a file that a person named (a playbook, a model script, a trace, a persona file, a
price file, an MCP configuration, a tool catalogue, a memory export).

Every such file goes through :func:`read_regular` (or :func:`regular_lines`, a line at a time):
only a regular file is read (a symbolic link is followed only to one), so a FIFO is never
opened for a blocking read and a link to ``/dev/zero`` is never read; and a file is read only
up to its kind's :class:`ReadLimit`, checked before reading and while reading (at most one
byte more than the limit is read, so a file that grows meanwhile cannot exhaust memory).
:func:`read_limited` and :func:`read_json` turn what goes wrong into a clear error naming the
file, the limit and the setting that raises it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import orjson

from sea.errors import SeaError, UsageError

NOT_A_REGULAR_FILE: Final = "SEA331"
"""A named file is a directory, a FIFO, a device or a socket: it was not read."""
FILE_TOO_LARGE: Final = "SEA332"
"""A named file is larger than the limit of its kind: it was not read."""


@dataclass(frozen=True, slots=True)
class ReadLimit:
    """The largest file of one kind that is read, and the setting that changes it."""

    max_bytes: int
    setting: str
    """What a person sets to raise the limit (named in the error): the command line reads
    the environment variable of this name (see ``sea.cli._setup.file_limit``)."""


CONFIG_FILES: Final = ReadLimit(1024 * 1024, "SEA_MAX_CONFIG_BYTES")
"""A configuration a person wrote (``--mcp``, ``--prices``, ``--persona-file``, ``--tools
FILE.json``, a model script): 1 MiB."""
TRACE_FILES: Final = ReadLimit(256 * 1024 * 1024, "SEA_MAX_TRACE_BYTES")
"""A trace written by ``sea run --record`` (every model call's prompt is in it): 256 MiB."""
MEMORY_IMPORTS: Final = ReadLimit(1024 * 1024 * 1024, "SEA_MAX_IMPORT_BYTES")
"""A memory export for ``sea memory import`` (read a line at a time): 1 GiB."""


class NotARegularFile(OSError):
    """The path is not a regular file (after following symbolic links); it was not read."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{path}: {kind}")
        self.kind = kind
        """What it is instead, in words: ``"a FIFO (named pipe)"``."""


class FileTooLarge(OSError):
    """The file has more bytes than allowed; it was not read (or not read further)."""

    def __init__(self, path: Path, shown: str, max_bytes: int) -> None:
        super().__init__(f"{path}: {shown}")
        self.shown = shown
        """Its size in words: ``"2,000,000 bytes"``, or ``"more than 1,024 bytes"`` for one
        that grew while it was read."""
        self.max_bytes = max_bytes


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
          | getattr(os, "O_CLOEXEC", 0))


def _open_regular(path: Path, max_bytes: int) -> int:
    """A descriptor of ``path`` open for reading, checked to be a regular file of at most
    ``max_bytes`` both before it is opened (so a FIFO is never opened) and after (the path
    may have been swapped meanwhile). Opened non-blocking, so even a swapped-in FIFO cannot
    block the open."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise NotARegularFile(path, kind_of(info.st_mode))
    if info.st_size > max_bytes:
        raise FileTooLarge(path, f"{info.st_size:,} bytes", max_bytes)
    fd = os.open(path, _FLAGS)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise NotARegularFile(path, kind_of(opened.st_mode))
        if opened.st_size > max_bytes:
            raise FileTooLarge(path, f"{opened.st_size:,} bytes", max_bytes)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes`` (at most
    ``max_bytes + 1`` bytes are ever read).

    Raises:
        NotARegularFile: it is a directory, a FIFO, a device or a socket.
        FileTooLarge: it has (or grew to) more than ``max_bytes``.
        OSError: it does not exist or cannot be read.
    """
    fd = _open_regular(path, max_bytes)
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > max_bytes:  # it grew after the first look
        raise FileTooLarge(path, f"more than {max_bytes:,} bytes", max_bytes)
    return b"".join(chunks)


def refusal(
    path: Path | str, what: str, exc: OSError, limit: ReadLimit, *,
    error: type[SeaError] = UsageError,
) -> SeaError:
    """The error for a file of ``what`` (``"price file"``) that was not read: a
    :class:`UsageError` naming the limit and its setting (``SEA332``) or what the path is
    instead (``SEA331``); for any other reason, an ``error`` with the OS's reason."""
    if isinstance(exc, NotARegularFile):
        return UsageError(
            f"the {what} {path} is {exc.kind}, not a regular file; it was not read (give "
            "the path of a regular file)", code=NOT_A_REGULAR_FILE)
    if isinstance(exc, FileTooLarge):
        return UsageError(
            f"the {what} {path} is {exc.shown}, larger than the {limit.max_bytes:,}-byte "
            f"limit for a {what}; it was not read (set {limit.setting} to a larger number "
            "of bytes to raise the limit)", code=FILE_TOO_LARGE)
    return error(f"cannot read the {what} {path}: {exc.strerror or exc}")


def read_limited(
    path: Path, what: str, limit: ReadLimit, *, error: type[SeaError] = UsageError
) -> bytes:
    """The bytes of the file of ``what`` at ``path`` (see :func:`read_regular`).

    Raises:
        SeaError: see :func:`refusal`.
    """
    try:
        return read_regular(path, limit.max_bytes)
    except OSError as exc:
        raise refusal(path, what, exc, limit, error=error) from None


def read_json(
    path: Path, what: str, *, limit: ReadLimit = CONFIG_FILES,
    error: type[SeaError] = UsageError,
) -> Any:
    """The parsed content of ``path``, which should hold ``what`` (e.g. ``"model script"``)
    and have at most ``limit`` bytes.

    Raises:
        SeaError: of type ``error``: the file cannot be read (the OS reason is given), or it
            is not valid JSON (the parser's position is given); a :class:`UsageError` when it
            is not a regular file or is too large (see :func:`refusal`).
    """
    data = read_limited(path, what, limit, error=error)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise error(f"the {what} {path} is not valid JSON: {exc}") from exc


@contextmanager
def regular_lines(
    path: Path, what: str, limit: ReadLimit, *, error: type[SeaError] = UsageError
) -> Iterator[Iterator[bytes]]:
    """The lines of the file of ``what`` at ``path``, read one at a time: the file is
    checked as by :func:`read_regular` when opened, and the lines stop with a
    ``SEA332`` error as soon as they pass ``limit`` (no line is read whole past it).

    Raises:
        SeaError: see :func:`refusal` (also while the lines are read).
    """
    try:
        fd = _open_regular(path, limit.max_bytes)
    except OSError as exc:
        raise refusal(path, what, exc, limit, error=error) from None
    with os.fdopen(fd, "rb") as file:
        yield bounded_lines(file, path, what, limit, error=error)


def bounded_lines(
    file: IO[bytes], path: Path | str, what: str, limit: ReadLimit, *,
    error: type[SeaError] = UsageError,
) -> Iterator[bytes]:
    """The lines of ``file`` (an open file or a stream such as standard input), until they
    pass ``limit``: then a ``SEA332`` error, with no line read past the limit's next byte.

    Raises:
        SeaError: see :func:`refusal`.
    """
    left = limit.max_bytes
    while True:
        try:
            line = file.readline(left + 1)
        except OSError as exc:
            raise refusal(path, what, exc, limit, error=error) from None
        if not line:
            return
        left -= len(line)
        if left < 0:
            raise refusal(path, what, FileTooLarge(Path(path),
                          f"more than {limit.max_bytes:,} bytes", limit.max_bytes), limit)
        yield line
