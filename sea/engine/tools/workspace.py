"""Workspace tools: list, look up, read and search the files of one directory the host gives.

:func:`workspace_tools` makes four tools, confined to the workspace root:

* ``list_files(path=".")`` → ``{"entries": [{"path", "type", "size"}], "truncated"}``: the
  entries directly inside a folder, sorted by path, at most :data:`MAX_LIST_ENTRIES`
  (``truncated`` is true when there were more). ``type`` is ``"file"`` or ``"dir"``; ``size``
  (bytes) is given for files only. Entries that cannot be used through the workspace are left
  out: symbolic links leading outside it or nowhere, FIFOs, devices, sockets, and names that
  are not UTF-8 (a tool's result is JSON text: such a name could be neither shown nor given
  back); ``search_files`` leaves them out the same way.
* ``file_exists(path)`` → ``{"path", "exists", "type"}`` (and ``size`` for a file): whether
  something is at ``path``; ``type`` is ``"file"``, ``"dir"``, ``"other"`` (a special file)
  or null when nothing is there. A missing path is an answer (``exists`` false), not an
  error; a refused path (below) is an error.
* ``read_file(path, offset=0, limit=8000)`` → ``{"path", "content", "offset", "total_chars",
  "truncated"}``: ``content`` is at most ``limit`` characters (at most
  :data:`~sea.engine.tools.signatures.MAX_READ_LIMIT`) from character ``offset``;
  ``total_chars`` is the file's length in characters and ``truncated`` is true when text
  follows the chunk. Text is UTF-8, bytes that are not UTF-8 become U+FFFD; line endings are
  kept as they are. A file with a NUL byte in its first :data:`BINARY_PROBE_BYTES` bytes is
  binary and refused; so is a file over :data:`MAX_FILE_BYTES` (judged by its size, before
  opening it). The file is streamed: only the chunk is held in memory.
* ``search_files(query, path=".")`` → ``{"matches": [{"path", "line", "text"}],
  "truncated"}``: the lines containing ``query`` (plain text, case-insensitive) in the text
  files under a folder (recursively) or in one file, in path order, at most
  :data:`MAX_MATCHES`; ``line`` is 1-based and ``text`` the line, cut to
  :data:`MAX_LINE_CHARS` characters around the match. Binary files and files over
  :data:`MAX_FILE_BYTES` are skipped; after :data:`MAX_SEARCH_FILES` files the search stops
  (``truncated`` is then true, as it is when there were more matches).

Paths are relative to the root, ``/``-separated; results give them the same way (through the
links they were found by), so any result path can be passed to another workspace tool.

Confinement (one helper, :meth:`Workspace.locate`, for all the tools): an absolute path, a
path with ``..`` and a path through a symbolic link that resolves outside the root are refused
with a :class:`WorkspaceError` naming the path and the reason; symbolic links that stay inside
are followed. A missing path is a :class:`WorkspaceError` too ("no such file or directory in
the workspace"). Every file and folder is reached through :mod:`sea.engine.tools.beneath`:
walked one component at a time from the root's descriptor, links read and checked there, and
then opened folder by folder without following any link, so a folder swapped for a link to an
outside place while a tool runs makes the call fail instead of reading outside. Special files
(FIFOs, devices, sockets) are never opened; files are opened without blocking and checked
again once open. Tools raise; :meth:`sea.engine.tools.box.ToolBox.invoke` reports a raising
tool as a :class:`sea.errors.ToolFailed` carrying the message.
"""

from __future__ import annotations

import heapq
import io
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath, PurePosixPath
from typing import Any, Literal, TextIO, overload

from langchain_core.tools import BaseTool

from sea.engine.tools import beneath
from sea.engine.tools.beneath import Parts
from sea.engine.tools.beneath import WorkspaceError as WorkspaceError  # its home, before
from sea.engine.tools.engine_tool import engine_tool
from sea.engine.tools.signatures import MAX_READ_LIMIT, READ_LIMIT, WORKSPACE_ARGUMENTS
from sea.errors import UsageError

MAX_LIST_ENTRIES = 500
"""The most entries ``list_files`` returns."""
MAX_FILE_BYTES = 10 * 1024 * 1024
"""The largest file ``read_file`` reads and ``search_files`` searches (10 MiB)."""
MAX_MATCHES = 100
"""The most matching lines ``search_files`` returns."""
MAX_LINE_CHARS = 300
"""The longest line text ``search_files`` returns (a longer line is cut around the match)."""
MAX_SEARCH_FILES = 5000
"""The most files one ``search_files`` call reads."""
BINARY_PROBE_BYTES = 8192
"""How much of a file is looked at for a NUL byte, the sign of a binary file."""

_BLOCK_CHARS = 65_536
_ELLIPSIS = "…"


def workspace_tools(root: Path) -> list[BaseTool]:
    """The workspace tools ``list_files``, ``file_exists``, ``read_file`` and
    ``search_files``, confined to ``root``.

    Args:
        root: The workspace directory (resolved once, here; a symbolic link is fine).

    Raises:
        UsageError: ``root`` is not an existing directory.
    """
    workspace = Workspace(root)
    return [
        _tool(
            workspace.list_files,
            name="list_files",
            description=(
                "List the files and folders directly inside a folder of the workspace (not "
                "recursive; use it again on a subfolder). Returns {entries: [{path, type, "
                "size}], truncated}: `path` is relative to the workspace root and can be "
                "passed to the other workspace tools, `type` is `file` or `dir`, `size` is a "
                f"file's size in bytes. Sorted by path, at most {MAX_LIST_ENTRIES} entries; "
                "`truncated` is true when the folder holds more."
            ),
        ),
        _tool(
            workspace.file_exists,
            name="file_exists",
            description=(
                "Tell whether a file or folder is at a path of the workspace. Returns {path, "
                "exists, type} (and size for a file): `type` is `file`, `dir`, `other` or null "
                "when nothing is there."
            ),
        ),
        _tool(
            workspace.read_file,
            name="read_file",
            description=(
                "Read a text file of the workspace, one chunk at a time. Returns {path, "
                "content, offset, total_chars, truncated}: `content` is at most `limit` "
                f"characters (default {READ_LIMIT}, at most {MAX_READ_LIMIT}) from character "
                "`offset`; `total_chars` is the file's length. When `truncated` is true, more "
                "text follows: call again with offset = offset + the length of content. Text "
                "is read as UTF-8 (invalid bytes become U+FFFD). Binary files and files over "
                f"{MAX_FILE_BYTES // (1024 * 1024)} MiB are refused."
            ),
        ),
        _tool(
            workspace.search_files,
            name="search_files",
            description=(
                "Find the lines that contain a text, in the text files of a workspace folder "
                "and all its subfolders (or in one file). Plain text, not a regular "
                "expression; case-insensitive. Returns {matches: [{path, line, text}], "
                "truncated}: `line` is the 1-based line number, `text` the line (cut to "
                f"{MAX_LINE_CHARS} characters around the match). At most {MAX_MATCHES} "
                "matches; `truncated` is true when the search stopped early. Binary files and "
                f"files over {MAX_FILE_BYTES // (1024 * 1024)} MiB are skipped. A match's path "
                "can be read to see around it."
            ),
        ),
    ]


def _tool(run: Callable[..., dict[str, Any]], *, name: str, description: str) -> BaseTool:
    """A tool of a synchronous ``run`` whose arguments are the catalogue's model for ``name``;
    called from a pulse, it runs in a worker thread, so file access never blocks the loop."""
    return engine_tool(
        func=run, name=name, description=description, args_schema=WORKSPACE_ARGUMENTS[name]
    )


class Workspace:
    """One workspace root and the tools' work, every path going through
    :meth:`locate` (public, so that whatever else works in the workspace, plans say,
    confines its paths the same way) and every file and folder reached through
    :mod:`sea.engine.tools.beneath`."""

    def __init__(self, root: Path) -> None:
        try:
            resolved = Path(root).resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise UsageError(f"workspace root {str(root)!r} does not exist ({exc})") from exc
        if not resolved.is_dir():
            raise UsageError(f"workspace root {str(root)!r} is not a directory")
        self.root = resolved

    # -- the tools ---------------------------------------------------------------------------

    def list_files(self, path: str = ".") -> dict[str, Any]:
        """``list_files``: see the module docstring."""
        real, shown, info = self._locate(path)
        if not stat.S_ISDIR(info.st_mode):
            raise WorkspaceError(f"path {path!r} is {_kind(info)}, not a directory")
        try:
            found = beneath.entries(self.root, real)
        except OSError as exc:
            raise WorkspaceError(f"folder {path!r} cannot be listed: {_reason(exc)}") from exc
        entries = (
            entry
            for name, _, status in found
            if _nameable(name) and (entry := _entry(_join(shown, name), status))
        )
        first = heapq.nsmallest(MAX_LIST_ENTRIES + 1, entries, key=lambda e: e["path"])
        return {"entries": first[:MAX_LIST_ENTRIES], "truncated": len(first) > MAX_LIST_ENTRIES}

    def file_exists(self, path: str) -> dict[str, Any]:
        """``file_exists``: see the module docstring."""
        parts = _parts(path)
        _, info = beneath.resolve(self.root, parts, path=path, missing_ok=True)
        shown = _join_parts(parts)
        if info is None:
            return {"path": shown, "exists": False, "type": None}
        found = _entry(shown, info) or {"path": shown, "type": "other"}
        return {"path": shown, "exists": True, **found}

    def read_file(self, path: str, offset: int = 0, limit: int = READ_LIMIT) -> dict[str, Any]:
        """``read_file``: see the module docstring."""
        if offset < 0 or not 1 <= limit <= MAX_READ_LIMIT:
            raise WorkspaceError(
                f"read_file needs offset >= 0 and 1 <= limit <= {MAX_READ_LIMIT} "
                f"(got offset {offset}, limit {limit})"
            )
        real, shown, info = self._locate(path)
        _check_readable(path, info)
        with _open_text(lambda: beneath.open_file(self.root, real), path) as stream:
            content, total = _chunk(stream, offset, limit)
        return {
            "path": shown,
            "content": content,
            "offset": offset,
            "total_chars": total,
            "truncated": offset + len(content) < total,
        }

    def search_files(self, query: str, path: str = ".") -> dict[str, Any]:
        """``search_files``: see the module docstring."""
        if not query:
            raise WorkspaceError("search_files needs a non-empty query")
        real, shown, info = self._locate(path)
        if stat.S_ISREG(info.st_mode):
            _check_readable(path, info)
        elif not stat.S_ISDIR(info.st_mode):
            raise WorkspaceError(f"path {path!r} is {_kind(info)}, not a file or directory")
        search = _Search(self, query)
        search.run(real, shown, info)
        return {"matches": search.matches, "truncated": search.truncated}

    # -- confinement ---------------------------------------------------------------------------

    @overload
    def locate(self, path: str) -> tuple[Path, str, os.stat_result]: ...

    @overload
    def locate(
        self, path: str, *, missing_ok: Literal[True]
    ) -> tuple[Path, str, os.stat_result | None]: ...

    def locate(
        self, path: str, *, missing_ok: bool = False
    ) -> tuple[Path, str, os.stat_result | None]:
        """Where ``path`` (relative to the root) really is, how results show it and its status.

        The real path has no symbolic link in it and lies inside the root: it is found by
        :func:`sea.engine.tools.beneath.resolve`, which walks the path one component at a time
        from the root's descriptor, reading the links it meets (never letting the kernel
        follow one). Whatever then works on the real path reaches it through
        :mod:`~sea.engine.tools.beneath` too, so a folder swapped for a link meanwhile is an
        error, not a way out.

        With ``missing_ok`` (for a file or folder about to be made), a path that does not
        exist is no error: its status is ``None`` and its real path is that of its deepest
        existing folder (links followed and checked as above) joined with the missing rest,
        so it lies inside the root too. A symbolic link that leads nowhere is refused then,
        since making the path would make the link's target.

        Raises:
            WorkspaceError: ``path`` is absolute, has ``..``, has a NUL character, goes through
                a symbolic link that resolves outside the root, or does not exist (unless
                ``missing_ok``).
        """
        parts = _parts(path)
        real, info = beneath.resolve(self.root, parts, path=path, missing_ok=missing_ok)
        return self.root.joinpath(*real), _join_parts(parts), info

    def _locate(self, path: str) -> tuple[Parts, str, os.stat_result]:
        """:meth:`locate` as real components, for the tools."""
        parts = _parts(path)
        real, info = beneath.resolve(self.root, parts, path=path)
        assert info is not None  # not missing_ok: a missing path raised
        return real, _join_parts(parts), info


def _entry(shown: str, info: os.stat_result) -> dict[str, Any] | None:
    """A ``list_files`` entry, or ``None`` for what is left out (a special file)."""
    if stat.S_ISDIR(info.st_mode):
        return {"path": shown, "type": "dir"}
    if stat.S_ISREG(info.st_mode):
        return {"path": shown, "type": "file", "size": info.st_size}
    return None


class _Search:
    """One ``search_files`` call: a walk in path order, each real file and folder once."""

    def __init__(self, workspace: Workspace, query: str) -> None:
        self.workspace = workspace
        self.needle = query.casefold()
        self.matches: list[dict[str, Any]] = []
        self.truncated = False
        self.files_read = 0
        self.seen: set[Parts] = set()
        self.files = beneath.FileOpener(workspace.root)

    def run(self, real: Parts, shown: str, info: os.stat_result) -> None:
        """Search ``real`` (shown as ``shown``), a folder or a file, until a bound is hit."""
        try:
            self._walk(real, shown, info)
        finally:
            self.files.close()

    def _walk(self, real: Parts, shown: str, info: os.stat_result) -> None:
        pending: list[tuple[Parts, str, os.stat_result]] = [(real, shown, info)]
        while pending and not self.truncated:
            real, shown, info = pending.pop()
            if real in self.seen:
                continue
            self.seen.add(real)
            if stat.S_ISDIR(info.st_mode):
                pending.extend(reversed(self._children(real, shown)))
            elif stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES:
                self._file(real, shown)

    def _children(self, real: Parts, shown: str) -> list[tuple[Parts, str, os.stat_result]]:
        try:
            found = beneath.entries(self.workspace.root, real)
        except OSError:
            return []
        return [(parts, _join(shown, name), info)
                for name, parts, info in sorted(found, key=lambda entry: entry[0])
                if _nameable(name)]

    def _file(self, real: Parts, shown: str) -> None:
        if self.files_read >= MAX_SEARCH_FILES:
            self.truncated = True
            return
        self.files_read += 1
        try:
            with _open_text(lambda: self.files.open_file(real), shown) as stream:
                for number, line in enumerate(stream, start=1):
                    at = line.casefold().find(self.needle)
                    if at < 0:
                        continue
                    if len(self.matches) >= MAX_MATCHES:
                        self.truncated = True
                        return
                    text = _excerpt(line.rstrip("\r\n"), at)
                    self.matches.append({"path": shown, "line": number, "text": text})
        except (WorkspaceError, OSError):
            return  # binary, vanished or unreadable: not searched


def _nameable(name: str) -> bool:
    """Whether a name met in a folder can be given back to the tools: a name that is not
    UTF-8 (read as lone surrogates) cannot be written in a tool's JSON result."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parts(path: str) -> tuple[str, ...]:
    """The components of a workspace path.

    Raises:
        WorkspaceError: the path is absolute, has ``..`` (even one that stays inside), has a
            NUL character or cannot be a file name.
    """
    if "\0" in path:
        raise WorkspaceError(f"path {path!r} is refused: it contains a NUL character")
    try:
        os.fsencode(path)
    except UnicodeError as exc:
        raise WorkspaceError(f"path {path!r} is refused: it is not a valid file name") from exc
    pure = PurePath(path)
    if pure.anchor or PurePosixPath(path).is_absolute():
        raise WorkspaceError(
            f"path {path!r} leaves the workspace: absolute paths are not allowed; give a path "
            "relative to the workspace root"
        )
    if ".." in pure.parts:
        escapes = os.path.normpath(path).split(os.sep)[0] == ".."
        raise WorkspaceError(
            f"path {path!r} {'leaves the workspace' if escapes else 'is refused'}: '..' "
            "components are not allowed; give a path relative to the workspace root"
        )
    return pure.parts


def _join_parts(parts: tuple[str, ...]) -> str:
    return PurePosixPath(*parts).as_posix() if parts else "."


def _join(shown: str, name: str) -> str:
    return name if shown == "." else f"{shown}/{name}"


_kind = beneath.kind


_reason = beneath.reason


def _check_readable(path: str, info: os.stat_result) -> None:
    """Refuse what ``read_file`` never opens: anything but a regular file, or a too large one.

    Raises:
        WorkspaceError: ``info`` is not a regular file's, or the file is over the size cap.
    """
    if not stat.S_ISREG(info.st_mode):
        raise WorkspaceError(f"path {path!r} is {_kind(info)}, not a file")
    if info.st_size > MAX_FILE_BYTES:
        raise WorkspaceError(
            f"file {path!r} is too large to read: {info.st_size} bytes, the limit is "
            f"{MAX_FILE_BYTES} bytes"
        )


@contextmanager
def _open_text(opening: Callable[[], int], path: str) -> Iterator[TextIO]:
    """The regular file that ``opening`` opens (:func:`sea.engine.tools.beneath.open_file`)
    as UTF-8 text (invalid bytes replaced, line endings kept).

    It is reached from the root one folder at a time and opened without following a symbolic
    link anywhere and without blocking (should the file or a folder on the way have been
    swapped for a link or a FIFO since it was checked), then checked again.

    Raises:
        WorkspaceError: it is no longer a regular file of at most the size cap, it is binary
            (a NUL byte in its first :data:`BINARY_PROBE_BYTES` bytes), or it cannot be opened.
    """
    try:
        fd = opening()
    except OSError as exc:
        raise WorkspaceError(f"file {path!r} cannot be opened: {_reason(exc)}") from exc
    with open(fd, "rb") as raw:
        _check_readable(path, os.fstat(fd))
        if b"\0" in raw.read(BINARY_PROBE_BYTES):
            raise WorkspaceError(
                f"file {path!r} is binary (it contains NUL bytes); only text files can be read"
            )
        raw.seek(0)
        text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
        try:
            yield text
        finally:
            text.detach()


def _chunk(stream: TextIO, offset: int, limit: int) -> tuple[str, int]:
    """The ``limit`` characters from ``offset`` and the total number of characters, read in
    blocks (only the chunk is kept)."""
    end = offset + limit
    kept: list[str] = []
    position = 0
    while block := stream.read(_BLOCK_CHARS):
        start, stop = max(offset - position, 0), min(end - position, len(block))
        if start < stop:
            kept.append(block[start:stop])
        position += len(block)
    return "".join(kept), position


def _excerpt(line: str, at: int) -> str:
    """``line`` cut to :data:`MAX_LINE_CHARS` characters around position ``at`` (marked with
    an ellipsis where cut)."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    start = max(0, min(at - MAX_LINE_CHARS // 3, len(line) - MAX_LINE_CHARS))
    text = line[start : start + MAX_LINE_CHARS]
    if start > 0:
        text = _ELLIPSIS + text[1:]
    if start + MAX_LINE_CHARS < len(line):
        text = text[:-1] + _ELLIPSIS
    return text
