"""The open documents and the playbook library they are checked against.

A document open in the editor is checked from its text as typed, not from its file; the
library's other playbooks are read from their directories (the ``--playbooks`` ones, each
open file's directory, then the bundled playbooks), and an open document stands in for the
file of the same playbook name: a callee edited in one window changes its callers' checks in
the others before it is saved. The checks are :func:`sea.lang.loader.check_document`'s, the
same as ``sea validate``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import orjson

from sea.errors import Diagnostic, Severity
from sea.lang import codes
from sea.lang.checks import CheckContext, Signature, ToolCatalogue
from sea.lang.files import MAX_PLAYBOOK_BYTES
from sea.lang.library import PlaybookLibrary, read_signature
from sea.lang.loader import LoadResult, check_document
from sea.lang.vocabulary import BUILTIN_NODE_TYPES, NodeTypes
from sea.lsp.scan import scan

_LOOKS_LIKE_PLAYBOOK = re.compile(r'"(?:start_node|nodes)"\s*:')

LOCAL_CODES = frozenset({
    codes.DUPLICATE_KEY, codes.INVALID_VALUE, codes.UNKNOWN_FIELD, codes.WRONG_TYPE,
    codes.UNKNOWN_NODE_TYPE, codes.UNSUPPORTED_NODE_TYPE, codes.BAD_PATTERN, codes.BAD_ENUM,
    codes.CONDITIONAL_NEXT_LIST, codes.ERROR_NEXT_NOT_FALLIBLE, codes.BAD_RESPONSE_SCHEMA,
    codes.RESERVED_ID, codes.EXPRESSION_SYNTAX, codes.RESERVED_TAG, codes.TOOLS_WITH_SCHEMA,
    codes.EXPRESSION_TOO_LARGE, codes.UNSUPPORTED_PATTERN, codes.PYTHON_BOOLEAN_KEY,
    codes.UNKNOWN_PLAYBOOK, codes.UNKNOWN_ARGUMENT, codes.MISSING_ARGUMENT, codes.UNKNOWN_TOOL,
    codes.UNKNOWN_TOOL_ARGUMENT, codes.MISSING_TOOL_ARGUMENT, codes.BAD_TOOL_ARGUMENT,
})
"""The codes a part of a document can be judged by alone: what the text after it (not
written yet) cannot change."""


def uri_path(uri: str) -> Path | None:
    """The local file of a ``file:`` URI (``None`` for an unsaved buffer)."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def is_playbook(text: str, document: Any) -> bool:
    """Whether a document is a playbook: its ``$schema`` names SEA's playbook schema, or it
    has a ``nodes`` array and a ``start_node``; a text that is not JSON (yet) is one when it
    has either member."""
    if isinstance(document, dict):
        schema = document.get("$schema")
        if isinstance(schema, str) and "playbook.schema" in schema:
            return True
        return isinstance(document.get("nodes"), list) and "start_node" in document
    return document is None and _LOOKS_LIKE_PLAYBOOK.search(text) is not None


@dataclass
class Document:
    """One open document and what its last check found."""

    uri: str
    text: str
    version: int | None = None
    raw: Any = None
    """The parsed JSON (``None`` when the text is not JSON)."""
    last_raw: Any = None
    """The last text's parse that succeeded (this one's, or an earlier version's): what
    completion and navigation read while the text is half typed."""
    result: LoadResult = field(default_factory=lambda: LoadResult(None))
    playbook: bool = False
    """Whether the document is a playbook (other JSON files get no diagnostics)."""

    @property
    def path(self) -> Path | None:
        """The document's file, if it has one."""
        return uri_path(self.uri)

    @property
    def known(self) -> Any:
        """The parse of this text, else of the last text that parsed (a callee half typed
        keeps, for its callers, the signature it last had)."""
        return self.raw if self.raw is not None else self.last_raw

    @property
    def name(self) -> str | None:
        """The playbook's name as written (the file's stem when it has none)."""
        known = self.known
        if isinstance(known, dict) and isinstance(known.get("name"), str):
            return str(known["name"])
        path = self.path
        return path.stem if path is not None and self.playbook else None


class _Overlay:
    """The library as the editor sees it: the open playbooks first, then the files."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def names(self) -> list[str]:
        return sorted({*self._workspace.library.names(), *self._workspace.open_names()})

    def signature(self, name: str) -> Signature | None:
        document = self._workspace.open_playbook(name)
        if document is not None:
            return read_signature(name, document.known)
        return self._workspace.library.signature(name)


class Workspace:
    """The open documents, checked against a library of playbook directories.

    Args:
        dirs: The library's directories, before the open files' and the bundled one.
        tools: The host's tools (``None``: tools are not checked), as ``sea validate``.
        types: The node types playbooks may use.
    """

    def __init__(self, dirs: Iterable[Path] = (), tools: ToolCatalogue | None = None,
                 types: NodeTypes = BUILTIN_NODE_TYPES) -> None:
        self.dirs = list(dirs)
        self.tools = tools
        self.types = types
        self.documents: dict[str, Document] = {}
        self._opened_dirs: list[Path] = []
        """The directories of the files opened so far (a library directory each)."""
        self._library: PlaybookLibrary | None = None
        self.index = _Overlay(self)

    @property
    def library(self) -> PlaybookLibrary:
        """The playbooks on disk: the given directories, the open files', the bundled."""
        if self._library is None:
            self._library = PlaybookLibrary.bundled(
                dict.fromkeys([*self.dirs, *self._opened_dirs]), tools=self.tools,
                types=self.types)
        return self._library

    def context(self) -> CheckContext:
        """What the checks consult: the open playbooks and the library, the tools."""
        return CheckContext(library=self.index, tools=self.tools)

    def open_names(self) -> list[str]:
        """The names of the open playbooks."""
        return [name for d in self.documents.values() if d.playbook
                and (name := d.name) is not None]

    def open_playbook(self, name: str) -> Document | None:
        """The open playbook of that name, if one is open."""
        return next((d for d in self.documents.values() if d.playbook and d.name == name),
                    None)

    def update(self, uri: str, text: str, version: int | None = None) -> list[str]:
        """A document was opened or changed: check it, and again the open playbooks that
        call it when what callers see of it changed. Returns the documents re-checked."""
        before = self.documents.get(uri)
        old = (before.name, read_signature(before.name, before.known)) \
            if before is not None and before.name is not None else None
        path = uri_path(uri)
        if path is not None and path.parent not in self._opened_dirs:
            self._opened_dirs.append(path.parent)
            self._library = None
        document = Document(uri, text, version,
                            last_raw=before.known if before is not None else None)
        self._check(document)
        self.documents[uri] = document
        changed = [uri]
        name = document.name
        now = (name, read_signature(name, document.known)) if name is not None else None
        if now != old:
            names = {n for n in (old[0] if old else None, name) if n is not None}
            changed += self._recheck_callers(names, skip=uri)
        return changed

    def close(self, uri: str) -> list[str]:
        """A document was closed: its callers see its file again. Returns those re-checked."""
        document = self.documents.pop(uri, None)
        if document is None or document.name is None:
            return []
        return self._recheck_callers({document.name}, skip=uri)

    def _recheck_callers(self, names: set[str], skip: str) -> list[str]:
        quoted = [orjson.dumps(name).decode() for name in names]
        again = []
        for other in self.documents.values():
            if other.uri != skip and other.playbook and any(q in other.text for q in quoted):
                self._check(other)
                again.append(other.uri)
        return again

    def _check(self, document: Document) -> None:
        """Check a document as ``sea validate`` does (within the size limit)."""
        path = document.path
        file = str(path) if path is not None else document.uri
        size = len(document.text.encode("utf-8", "surrogatepass"))
        if size > MAX_PLAYBOOK_BYTES:
            document.playbook = True
            document.result = LoadResult(None, [Diagnostic(
                code=codes.FILE_TOO_LARGE, severity=Severity.ERROR, file=file, line=1,
                column=1, message=f"the document is {size:,} bytes, more than the "
                f"{MAX_PLAYBOOK_BYTES:,} bytes a playbook may have; it is not checked",
                hint="split it into playbooks that call each other (subplay)")])
            return
        try:
            document.raw = document.last_raw = orjson.loads(document.text)
        except orjson.JSONDecodeError:
            document.raw = None
        document.playbook = is_playbook(document.text, document.raw)
        if not document.playbook:
            document.result = LoadResult(None)
            return
        document.result = check_document(document.text, file=file, context=self.context(),
                                         types=self.types)
        if document.raw is None:
            found = [*document.result.diagnostics, *self._before_the_error(document.text, file)]
            document.result = LoadResult(None, found)

    def _before_the_error(self, text: str, file: str) -> list[Diagnostic]:
        """The diagnostics of a text that is not JSON (yet) that can be found: the checks of
        its longest prefix that ends well, closed, kept for the members complete in it and
        only of the kinds that the rest of the text cannot change (a field's name or value,
        a template, a callee's or a tool's arguments; not a missing node or variable)."""
        found = scan(text)
        repaired = found.repaired(text)
        if repaired is None:
            return []
        result = check_document(repaired, file=file, context=self.context(), types=self.types)
        kept = []
        for diagnostic in result.diagnostics:
            parts = diagnostic.pointer.split("/")
            whole = "/".join(parts[:3]) if parts[1:2] == ["nodes"] else "/".join(parts[:2])
            if diagnostic.code in LOCAL_CODES and len(parts) > 1 and whole in found.values:
                kept.append(diagnostic)
        return kept

    def diagnostics(self, uri: str) -> list[Diagnostic]:
        """The last check's diagnostics of an open document."""
        document = self.documents.get(uri)
        return [] if document is None else list(document.result.diagnostics)
