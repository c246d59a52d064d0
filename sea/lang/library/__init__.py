"""The playbook library: playbooks by name from ordered directories (earlier dirs win).

A playbook is validated once and cached by the sha256 of its file's bytes; editing a file
is noticed on the next :meth:`PlaybookLibrary.get`. Calls between playbooks are checked
against the library (subplay targets, arguments, callee outputs), so a library validates its
playbooks with itself as the context.

A directory scan reads only regular files of at most
:data:`~sea.lang.files.MAX_PLAYBOOK_BYTES` (a symlink is followed only to a regular file):
a FIFO, a device or an oversized file named ``*.json`` is left out, and
:meth:`PlaybookLibrary.skipped` says why. A file with odd values (``"input_schema": 1.5``)
is still listed; its own check reports them, and its callers see no parameters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from sea.errors import Diagnostic, PlaybookError, SeaError
from sea.lang import codes
from sea.lang.checks import CheckContext, Signature, ToolCatalogue
from sea.lang.files import read_playbook_bytes, scan_directory
from sea.lang.hints import did_you_mean
from sea.lang.loader import LoadResult, check_document
from sea.lang.models import REPORT_KEY, Playbook
from sea.lang.vocabulary import BUILTIN_NODE_TYPES, NodeTypes


class PlaybookNotFound(SeaError, LookupError):
    """No playbook of that name in the library."""

    code = codes.UNKNOWN_PLAYBOOK


@dataclass(frozen=True)
class _Entry:
    path: Path
    digest: str
    signature: Signature
    """What callers need, read once from the parsed JSON (not validated)."""


def _parse(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def read_signature(name: str, raw: Any) -> Signature:
    """What callers need from a file's parsed JSON, read defensively: the file is not
    validated yet, so any field may hold any JSON value (its own check reports it).

    Args:
        name: The playbook's name.
        raw: The file's parsed JSON (any value).

    Returns:
        Its parameters (name → required), outputs and whether a router may call it.
    """
    params: dict[str, bool] = {}
    sources: dict[str, str] = {}
    outputs: tuple[str, ...] = ()
    router = False
    if isinstance(raw, dict):
        declared_params = raw.get("input_schema")
        for param in declared_params if isinstance(declared_params, list) else ():
            if isinstance(param, dict) and isinstance(param.get("name"), str):
                required = (param.get("required", False) is True and param.get("default") is None
                            and not param.get("source"))
                params[param["name"]] = required
                if isinstance(param.get("source"), str):
                    sources[param["name"]] = param["source"]
        declared = raw.get("output_schema")
        if isinstance(declared, list):
            outputs = tuple(o for o in declared if isinstance(o, str))
        if isinstance(raw.get("report_template"), str) and REPORT_KEY not in outputs:
            outputs = (*outputs, REPORT_KEY)  # the rendered report reaches the caller
        router = raw.get("router_callable") is True
    return Signature(
        name=name, params=params, outputs=outputs, router_callable=router, sources=sources
    )


class PlaybookLibrary:
    """Playbooks found in ``dirs`` (``*.json``, not recursive); earlier directories win.

    Args:
        dirs: Directories in priority order (user directories before the bundled one).
            Directories that do not exist are skipped.
        tools: A tool catalogue for the static checks (optional).
        types: The node types playbooks may use (default: the built-in ones; a host with its
            own node types passes its registry's ``node_types()``).
    """

    def __init__(
        self,
        dirs: Sequence[Path],
        *,
        tools: ToolCatalogue | None = None,
        types: NodeTypes = BUILTIN_NODE_TYPES,
    ) -> None:
        self._dirs = [Path(d) for d in dirs]
        self._tools = tools
        self.types = types
        self._entries: dict[str, _Entry] | None = None
        self._shadowed: list[tuple[str, Path]] = []
        self._skipped: list[Diagnostic] = []
        self._cache: dict[str, tuple[str, LoadResult]] = {}
        self._digests: dict[Path, tuple[tuple[int, int, int], str]] = {}

    @classmethod
    def bundled(cls, extra_dirs: Iterable[Path] = (), **kwargs: Any) -> PlaybookLibrary:
        """A library of ``extra_dirs`` followed by the bundled playbooks directory."""
        from sea.resources import bundled_playbooks_dir

        return cls([*extra_dirs, bundled_playbooks_dir()], **kwargs)

    @property
    def dirs(self) -> list[Path]:
        """The directories searched, in priority order."""
        return list(self._dirs)

    def _scan(self) -> dict[str, _Entry]:
        if self._entries is not None:
            return self._entries
        entries: dict[str, _Entry] = {}
        self._skipped = []
        for directory in self._dirs:
            found, left_out = scan_directory(directory)
            self._skipped.extend(left_out)
            for path, data in found:
                raw = _parse(data)
                name = raw.get("name") if isinstance(raw, dict) else None
                name = name if isinstance(name, str) else path.stem
                if name in entries:
                    self._shadowed.append((name, path))
                    continue
                entries[name] = _Entry(
                    path, hashlib.sha256(data).hexdigest(), read_signature(name, raw)
                )
        self._entries = entries
        return entries

    def refresh(self) -> None:
        """Forget the directory listing (validated playbooks stay cached by content)."""
        self._entries = None
        self._shadowed = []
        self._skipped = []

    def skipped(self) -> list[Diagnostic]:
        """Warnings for the ``*.json`` entries of the directories that were left out (not a
        regular file, too large, unreadable)."""
        self._scan()
        return list(self._skipped)

    def names(self) -> list[str]:
        """Every playbook name, sorted."""
        return sorted(self._scan())

    def shadowed(self) -> list[tuple[str, Path]]:
        """(name, file) of files hidden by an earlier file with the same playbook name."""
        self._scan()
        return list(self._shadowed)

    def path(self, name: str) -> Path:
        """The file of a playbook.

        Raises:
            PlaybookNotFound: No such playbook.
        """
        entries = self._scan()
        entry = entries.get(name)
        if entry is None:
            where = ", ".join(map(str, self._dirs)) or "no directory"
            close = did_you_mean(name, entries)
            hint = f"; did you mean `{close}`?" if close else ""
            raise PlaybookNotFound(f"no playbook named `{name}` in {where}{hint}")
        return entry.path

    def content_hash(self, name: str) -> str:
        """sha256 (hex) of the playbook file's current bytes."""
        return self._digest(self.path(name))

    def _digest(self, path: Path, data: bytes | None = None) -> str:
        """The file's sha256, read again only when its size, mtime or inode changed.

        Raises:
            PlaybookError: the file cannot be read (see :func:`read_playbook_bytes`).
        """
        try:
            stat = path.stat()
        except OSError:
            stat = None
        key = (stat.st_mtime_ns, stat.st_size, stat.st_ino) if stat is not None else None
        known = self._digests.get(path)
        if known is not None and known[0] == key and data is None:
            return known[1]
        digest = hashlib.sha256(read_playbook_bytes(path) if data is None else data).hexdigest()
        if key is not None:
            self._digests[path] = (key, digest)
        return digest

    def signature(self, name: str) -> Signature | None:
        """What callers need (parameters, outputs, router-callable), without validating."""
        entry = self._scan().get(name)
        return entry.signature if entry is not None else None

    def context(self) -> CheckContext:
        """The check context that validates playbooks of this library."""
        return CheckContext(library=self, tools=self._tools)

    def check(self, name: str) -> LoadResult:
        """Validate a playbook (cached by content hash) and return every diagnostic (a file
        that can no longer be read gives its reason as the one diagnostic)."""
        path = self.path(name)
        try:
            digest = self._digest(path)
            cached = self._cache.get(name)
            if cached is not None and cached[0] == digest:
                return cached[1]
            data = read_playbook_bytes(path)
        except PlaybookError as exc:
            return LoadResult(None, list(exc.diagnostics))
        digest = self._digest(path, data)
        result = check_document(data, file=str(path), context=self.context(), types=self.types)
        self._cache[name] = (digest, result)
        return result

    def get(self, name: str) -> Playbook:
        """The validated playbook.

        Raises:
            PlaybookNotFound: No such playbook.
            PlaybookError: The file has errors (all diagnostics).
        """
        result = self.check(name)
        if result.playbook is None:
            raise PlaybookError(result.diagnostics)
        return result.playbook

    def router_callable(self) -> list[Playbook]:
        """Valid playbooks with ``router_callable: true`` (invalid files are left out;
        ``sea validate`` reports them)."""
        found = []
        for name in self.names():
            signature = self.signature(name)
            if signature is None or not signature.router_callable:
                continue
            result = self.check(name)
            if result.playbook is not None:
                found.append(result.playbook)
        return found
