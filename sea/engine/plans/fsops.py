"""File operations inside the workspace that cannot land outside it.

Each operation takes the workspace root (resolved) and a *real* path relative to it, as
:meth:`sea.engine.tools.workspace.Workspace.locate` gives it (no symbolic link in it), and
walks that path from the root one folder at a time, opening each with ``O_NOFOLLOW``: a folder
swapped for a symbolic link after the check makes the operation fail instead of following
the link. Writes go to a temporary file in the target's folder, which is then renamed over
the target (``write``) or linked to the target's name, failing if the name is taken
(``create``): a reader sees the old file or the new one, never a part. Special files are
never opened. Needs a POSIX system (``os.open`` with ``dir_fd``). The walk is
:func:`sea.engine.tools.beneath.open_folder`, the one the workspace tools use.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

from sea.engine.tools import beneath

_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BLOCK = 1 << 16

Parts = tuple[str, ...]


class FsError(Exception):
    """A file operation failed; the message names the path and why (nothing half-done)."""


def supported() -> bool:
    """Whether this system has the ``dir_fd`` operations the plan executor needs."""
    return os.open in os.supports_dir_fd and os.mkdir in os.supports_dir_fd


def _shown(parts: Parts) -> str:
    return "/".join(parts) or "."


def _why(exc: OSError, parts: Parts) -> FsError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return FsError(f"{_shown(parts)!r}: a folder on the way is a symbolic link or not a "
                       "folder (changed since it was checked); nothing done")
    return FsError(f"{_shown(parts)!r}: {exc.strerror or type(exc).__name__}")


@contextmanager
def _folder(root: Path, parts: Parts, *, create: bool) -> Iterator[int]:
    """An open descriptor of the folder ``parts`` under ``root`` (made, with its parents,
    when ``create``), reached without following any symbolic link
    (:func:`sea.engine.tools.beneath.open_folder`, as the workspace tools reach theirs)."""
    with ExitStack() as opened:
        try:
            fd = opened.enter_context(beneath.open_folder(root, parts, create=create))
        except FileNotFoundError:  # the caller's to tell (``names`` finds none)
            raise
        except OSError as exc:
            raise _why(exc, parts) from exc
        yield fd


@contextmanager
def _file(root: Path, parts: Parts, limit: int | None) -> Iterator[int]:
    """An open descriptor of the regular file ``parts`` (at most ``limit`` bytes)."""
    try:
        with _folder(root, parts[:-1], create=False) as folder:
            fd = os.open(parts[-1], _FILE_FLAGS | _CLOEXEC, dir_fd=folder)
    except OSError as exc:
        raise _why(exc, parts) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FsError(f"{_shown(parts)!r} is not a regular file")
        if limit is not None and info.st_size > limit:
            raise FsError(f"{_shown(parts)!r} has {info.st_size} bytes, over the limit of "
                          f"{limit}")
        yield fd
    finally:
        os.close(fd)


def read_bytes(root: Path, parts: Parts, limit: int) -> bytes:
    """The content of a regular file of at most ``limit`` bytes.

    Raises:
        FsError: it is missing, not a regular file, too large or not reachable safely.
    """
    chunks = []
    with _file(root, parts, limit) as fd:
        while block := os.read(fd, _BLOCK):
            chunks.append(block)
    return b"".join(chunks)


def digest(root: Path, parts: Parts) -> str:
    """The SHA-256 of a regular file's content, read in blocks (any size)."""
    found = hashlib.sha256()
    with _file(root, parts, None) as fd:
        while block := os.read(fd, _BLOCK):
            found.update(block)
    return found.hexdigest()


def write_file(root: Path, parts: Parts, data: bytes, *, exclusive: bool) -> None:
    """Put ``data`` in the file ``parts`` atomically, making missing folders on the way.

    ``exclusive``: the file must not exist (``create``); otherwise it is replaced, keeping its
    permission bits (``write``).

    Raises:
        FsError: the file exists (``exclusive``), is a folder, or cannot be written.
    """
    try:
        with _folder(root, parts[:-1], create=True) as folder:
            _replace(folder, parts, data, exclusive=exclusive)
    except OSError as exc:
        raise _why(exc, parts) from exc


def _replace(folder: int, parts: Parts, data: bytes, *, exclusive: bool) -> None:
    name = parts[-1]
    mode = None
    with suppress(FileNotFoundError):
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if exclusive:
            raise FsError(f"{_shown(parts)!r} already exists; nothing written")
        if stat.S_ISLNK(info.st_mode):
            raise FsError(f"{_shown(parts)!r} is a symbolic link, not a regular file; "
                          "nothing written")
        if not stat.S_ISREG(info.st_mode):
            raise FsError(f"{_shown(parts)!r} is not a regular file; nothing written")
        mode = stat.S_IMODE(info.st_mode)
    temp = f".{name}.{uuid.uuid4().hex[:12]}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC
                 | getattr(os, "O_NOFOLLOW", 0), 0o666, dir_fd=folder)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if exclusive:
            os.link(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        else:
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except FileExistsError:
        raise FsError(f"{_shown(parts)!r} already exists; nothing written") from None
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=folder)
    with suppress(OSError):
        os.fsync(folder)


def make_dirs(root: Path, parts: Parts) -> None:
    """Make the folder ``parts`` and its missing parents (an existing folder is fine).

    Raises:
        FsError: something on the way is not a folder, or it cannot be made.
    """
    with _folder(root, parts, create=True):
        pass


def names(root: Path, parts: Parts) -> list[str]:
    """The names in the folder ``parts`` (none when it does not exist), reached without
    following any symbolic link.

    Raises:
        FsError: something on the way is a symbolic link or not a folder.
    """
    try:
        with _folder(root, parts, create=False) as folder:
            return sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise _why(exc, parts) from exc


def remove(root: Path, parts: Parts) -> None:
    """Delete the file ``parts`` (a symbolic link itself, never its target) or the empty
    folder ``parts``.

    Raises:
        FsError: it is missing, a folder that is not empty, or cannot be deleted.
    """
    try:
        with _folder(root, parts[:-1], create=False) as folder:
            info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                os.rmdir(parts[-1], dir_fd=folder)
            else:
                os.unlink(parts[-1], dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ENOTEMPTY:
            raise FsError(f"{_shown(parts)!r} is a folder that is not empty") from exc
        raise _why(exc, parts) from exc
