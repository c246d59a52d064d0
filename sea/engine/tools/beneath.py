"""Paths under a workspace root, walked one component at a time from the root's descriptor.

Every read, listing and search of the workspace tools and every file operation of a plan
reaches its file through this module: a folder is opened relative to the folder before it
(``dir_fd``) with ``O_NOFOLLOW | O_DIRECTORY``, never by a path the kernel resolves whole, so
a folder swapped for a symbolic link to an outside place while the work runs makes it fail
instead of following the link (``O_NOFOLLOW`` alone guards only a path's last component).

* :func:`resolve` turns a workspace path into its *real* components (no symbolic link among
  them), following the links met on the way by reading them (``readlink`` relative to their
  folder) and walking their targets the same way; a link whose target leaves the root
  (an absolute target elsewhere, or ``..`` above the root) is refused.
* :func:`open_folder`, :func:`open_file`, :func:`lstat` and :func:`entries` reach real
  components without
  following any link at all: whatever became a link since :func:`resolve` ran is an error
  (``ELOOP`` or ``ENOTDIR``), never a way out.

Needs a POSIX system (``os.open`` with ``dir_fd``).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath

Parts = tuple[str, ...]

MAX_LINKS = 40
"""The most symbolic links one path may go through (as the kernel's own limit)."""

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class WorkspaceError(ValueError):
    """A workspace tool refused a path (outside the workspace, missing, special, binary, too
    large ...); the message names the path and why."""


def reason(exc: OSError) -> str:
    """An OS error in words."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return "a folder on the way was replaced by a symbolic link or a file while it was used"
    return exc.strerror or type(exc).__name__


@contextmanager
def open_folder(root: Path, parts: Parts, *, create: bool = False) -> Iterator[int]:
    """An open descriptor of the folder ``parts`` under ``root`` (made, with its parents, when
    ``create``), each folder opened relative to the one before it without following a link.

    Raises:
        OSError: a component is missing (unless ``create``), not a folder, or a symbolic link
            (``ELOOP``/``ENOTDIR``), or cannot be opened.
    """
    fd = _folder_fd(root, parts, create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def _folder_fd(root: Path, parts: Parts, *, create: bool = False) -> int:
    """:func:`open_folder`'s descriptor, for the caller to close."""
    fd = os.open(root, _DIR_FLAGS | _CLOEXEC)
    try:
        for part in parts:
            try:
                opened = os.open(part, _DIR_FLAGS | _CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                opened = os.open(part, _DIR_FLAGS | _CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = opened
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(root: Path, parts: Parts) -> int:
    """A read-only descriptor of the entry ``parts`` (not the root), opened without following
    a link anywhere and without blocking (a FIFO); the caller checks what it is (``fstat``)
    and closes it.

    Raises:
        OSError: it is missing, a component is a symbolic link, or it cannot be opened.
    """
    with open_folder(root, parts[:-1]) as folder:
        return os.open(parts[-1], _FILE_FLAGS | _CLOEXEC, dir_fd=folder)


class FileOpener:
    """:func:`open_file` for many files, keeping the last folder reached open: a search
    reads a folder's files one after another, and walks from the root once per folder, not
    once per file. Close it when done."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folder: tuple[Parts, int] | None = None

    def open_file(self, parts: Parts) -> int:
        """As :func:`open_file`."""
        if self._folder is None or self._folder[0] != parts[:-1]:
            self.close()
            self._folder = (parts[:-1], _folder_fd(self.root, parts[:-1]))
        return os.open(parts[-1], _FILE_FLAGS | _CLOEXEC, dir_fd=self._folder[1])

    def close(self) -> None:
        """Close the folder kept open."""
        if self._folder is not None:
            os.close(self._folder[1])
            self._folder = None


def lstat(root: Path, parts: Parts) -> os.stat_result:
    """The status of the entry ``parts`` itself (a link's own), reached without following a
    link on the way.

    Raises:
        OSError: it or a folder on the way is missing, or a folder on the way is a link.
    """
    if not parts:
        with open_folder(root, ()) as fd:
            return os.fstat(fd)
    with open_folder(root, parts[:-1]) as folder:
        return os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)


def entries(root: Path, parts: Parts) -> list[tuple[str, Parts, os.stat_result]]:
    """The entries of the real folder ``parts`` that can be used through the workspace, as
    ``(name, real components, status)``: listed and examined through the folder's
    descriptor, a symbolic link resolved as :func:`resolve` does (one that leads outside,
    nowhere or round in a loop is left out, as is an entry that vanished meanwhile).

    Raises:
        OSError: the folder cannot be reached safely or listed.
    """
    found: list[tuple[str, Parts, os.stat_result]] = []
    with open_folder(root, parts) as fd, os.scandir(fd) as listing:
        for entry in listing:
            name = entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISLNK(info.st_mode):
                found.append((name, (*parts, name), info))
                continue
            try:
                real, target = resolve(root, (*parts, name), path=name)
            except WorkspaceError:
                continue
            if target is not None:
                found.append((name, real, target))
    return found


def resolve(
    root: Path, parts: Parts, *, path: str, missing_ok: bool = False
) -> tuple[Parts, os.stat_result | None]:
    """The real components of the workspace path ``parts`` (``path`` as given, for messages)
    and the status of what they name.

    Symbolic links met on the way are read and their targets walked from the link's folder;
    ``..`` in a target goes up one real folder. With ``missing_ok``, a missing path is no
    error: its status is ``None`` and its real components are the deepest existing folder's
    followed by the missing rest (a link that leads nowhere is refused then, since making the
    path would make the link's target).

    Raises:
        WorkspaceError: a link leads outside the root, nowhere (with ``missing_ok``) or through
            too many links; the path is missing (unless ``missing_ok``); a component on the way
            is not a folder; or it cannot be examined.
    """
    return _Walk(root, path).run(parts, missing_ok=missing_ok)


class _Walk:
    """One :func:`resolve`: a stack of open real folders, from the root down."""

    def __init__(self, root: Path, path: str) -> None:
        self.root = root
        self.path = path
        self.real: list[str] = []
        self.fds: list[int] = []
        self.links = 0

    def run(self, parts: Parts, *, missing_ok: bool) -> tuple[Parts, os.stat_result | None]:
        try:
            self.fds.append(os.open(self.root, _DIR_FLAGS | _CLOEXEC))
        except OSError as exc:
            raise WorkspaceError(
                f"path {self.path!r} cannot be examined: the workspace root cannot be opened "
                f"({reason(exc)})") from exc
        try:
            return self._walk(parts, missing_ok=missing_ok)
        finally:
            for fd in self.fds:
                os.close(fd)

    def _walk(self, parts: Parts, *, missing_ok: bool) -> tuple[Parts, os.stat_result | None]:
        # each pending component: (name, the prefix of the given path it stands for,
        # whether it comes from a link's target)
        pending = [(name, "/".join(parts[: at + 1]), False) for at, name in enumerate(parts)]
        info = os.fstat(self.fds[0])
        while pending:
            name, here, linked = pending.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if not self.real:
                    raise self._outside(here)
                self.real.pop()
                os.close(self.fds.pop())
                info = os.fstat(self.fds[-1])
                continue
            try:
                info = os.stat(name, dir_fd=self.fds[-1], follow_symlinks=False)
            except (FileNotFoundError, NotADirectoryError):
                return self._missing(name, here, linked, pending, missing_ok=missing_ok)
            except OSError as exc:
                raise self._unusable(exc) from exc
            if stat.S_ISLNK(info.st_mode):
                pending[:0] = self._target(name, here)
                continue
            if any(item[0] not in ("", ".") for item in pending):
                self._enter(name, here, info)
            else:
                self.real.append(name)
        return tuple(self.real), info

    def _target(self, name: str, here: str) -> list[tuple[str, str, bool]]:
        """The components of the link ``name``'s target, to walk next (from the root again
        for an absolute target inside it)."""
        self.links += 1
        if self.links > MAX_LINKS:
            raise WorkspaceError(
                f"path {self.path!r} cannot be followed: {here!r} goes through more than "
                f"{MAX_LINKS} symbolic links (a loop of links?)")
        try:
            target = PurePosixPath(os.readlink(name, dir_fd=self.fds[-1]))
        except OSError as exc:
            raise self._unusable(exc) from exc
        if target.is_absolute():
            if not target.is_relative_to(str(self.root)):
                raise self._outside(here)
            target = target.relative_to(str(self.root))
            while self.real:
                self.real.pop()
                os.close(self.fds.pop())
        return [(part, here, True) for part in target.parts]

    def _enter(self, name: str, here: str, info: os.stat_result) -> None:
        if not stat.S_ISDIR(info.st_mode):
            raise WorkspaceError(
                f"no such file or directory in the workspace: {self.path!r} ({here!r} is "
                f"{kind(info)}, not a directory)")
        try:
            self.fds.append(os.open(name, _DIR_FLAGS | _CLOEXEC, dir_fd=self.fds[-1]))
        except OSError as exc:
            raise self._unusable(exc) from exc
        self.real.append(name)

    def _missing(
        self, name: str, here: str, linked: bool, pending: list[tuple[str, str, bool]], *,
        missing_ok: bool,
    ) -> tuple[Parts, None]:
        if not missing_ok:
            raise WorkspaceError(f"no such file or directory in the workspace: {self.path!r}")
        if linked:
            raise WorkspaceError(
                f"path {self.path!r} is refused: {here!r} is a symbolic link that leads nowhere")
        rest = [item[0] for item in pending if item[0] not in ("", ".")]
        return (*self.real, name, *rest), None

    def _outside(self, here: str) -> WorkspaceError:
        return WorkspaceError(
            f"path {self.path!r} leaves the workspace: {here!r} is a symbolic link to a place "
            "outside it")

    def _unusable(self, exc: OSError) -> WorkspaceError:
        return WorkspaceError(f"path {self.path!r} cannot be examined: {reason(exc)}")


def kind(info: os.stat_result) -> str:
    """What a file is, in words."""
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (a special file, never opened)"
    if stat.S_ISSOCK(mode):
        return "a socket (a special file, never opened)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device (a special file, never opened)"
    return "a special file (never opened)"
