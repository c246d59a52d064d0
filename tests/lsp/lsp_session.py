"""A real editor session with ``sea lsp``: the server is started as a process and spoken to
over stdio by pytest-lsp's language client (no part of the server is called directly)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

WAIT = 60.0
"""Seconds a test waits for an answer (the machine is shared; the server answers in ms)."""


def position(text: str, needle: str, after: int = 0, occurrence: int = 1) -> lsp.Position:
    """The LSP position of the ``occurrence``-th ``needle`` in ``text``, plus ``after``
    characters (the texts here are ASCII: characters are UTF-16 units)."""
    offset = -1
    for _ in range(occurrence):
        offset = text.index(needle, offset + 1)
    offset += after
    line = text.count("\n", 0, offset)
    return lsp.Position(line, offset - (text.rfind("\n", 0, offset) + 1))


def offset(text: str, where: lsp.Position) -> int:
    """The offset of an LSP position in an ASCII text."""
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[: where.line]) + where.character


def apply(text: str, edits: list[lsp.TextEdit]) -> str:
    """``text`` with ``edits`` made (they do not overlap)."""
    for edit in sorted(edits, key=lambda e: offset(text, e.range.start), reverse=True):
        start, end = offset(text, edit.range.start), offset(text, edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


class Session:
    """``sea lsp ARGS`` in ``cwd``, initialised; ``async with`` shuts it down."""

    def __init__(self, *args: str, cwd: Path | None = None) -> None:
        self.args = ["--no-project", *args]
        self.cwd = cwd
        self.client = LanguageClient(converter_factory=default_converter)

        def got(client: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
            self._got(params)

        register_lsp_features(self.client, {**DEFAULT_CLIENT_FEATURES,
                                            lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: got})
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.published: list[lsp.PublishDiagnosticsParams] = []
        """Every diagnostics notification, in the order received (none is missed between
        two waits)."""
        self._read = 0
        self._arrived = asyncio.Event()

    def _got(self, params: lsp.PublishDiagnosticsParams) -> None:
        self.published.append(params)
        self._arrived.set()

    async def __aenter__(self) -> Session:
        await self.client.start_io(sys.executable, "-m", "sea", "lsp", *self.args,
                                   cwd=str(self.cwd) if self.cwd else None,
                                   env={**os.environ})
        await asyncio.wait_for(self.client.initialize_session(lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"))), WAIT)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.wait_for(self.client.shutdown_session(), WAIT)

    async def _published(self, uri: str) -> list[lsp.Diagnostic]:
        """The diagnostics of the next notification for ``uri`` at its current version (the
        notifications of other documents on the way are passed over)."""
        while True:
            while self._read < len(self.published):
                params = self.published[self._read]
                self._read += 1
                if params.uri == uri and params.version == self.versions.get(uri):
                    return list(params.diagnostics)
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), WAIT)

    async def open(self, path: Path, text: str | None = None) -> list[lsp.Diagnostic]:
        """Open a file (its text as given, else as on disk); its diagnostics."""
        uri = path.resolve().as_uri()
        self.texts[uri] = path.read_text() if text is None else text
        self.versions[uri] = 1
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri, "json", 1, self.texts[uri])))
        return await self._published(uri)

    def send_change(self, uri: str, text: str) -> None:
        """Send a change without waiting for its diagnostics."""
        self.texts[uri] = text
        self.versions[uri] += 1
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=self.versions[uri], uri=uri),
            [lsp.TextDocumentContentChangeWholeDocument(text)]))

    async def change(self, uri: str, text: str) -> list[lsp.Diagnostic]:
        """Replace a document's text; its new diagnostics."""
        self.send_change(uri, text)
        return await self._published(uri)

    async def wait_for(self, uri: str) -> list[lsp.Diagnostic]:
        """The next diagnostics published for ``uri`` (at its current version)."""
        return await self._published(uri)

    def doc(self, uri: str) -> lsp.TextDocumentIdentifier:
        """The identifier of an open document."""
        return lsp.TextDocumentIdentifier(uri)
