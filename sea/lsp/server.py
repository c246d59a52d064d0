"""The language server: the protocol's messages wired to the workspace and the features.

Documents are synchronised whole (each change sends the text): a playbook is small, and a
whole text is never out of step with the editor's. Every handler answers from the last
check; a request about a document that is not a playbook answers nothing.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any, NamedTuple

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from sea import __version__
from sea.errors import SeaError
from sea.lsp.actions import code_actions, graph, to_lsp
from sea.lsp.analysis import Analysis
from sea.lsp.features import complete, hover_text
from sea.lsp.navigation import (
    Spans,
    Target,
    definition,
    occurrences,
    rename,
    symbols,
    target_at,
)
from sea.lsp.positions import Lines
from sea.lsp.scan import cursor_at, scan
from sea.lsp.workspace import Document, Workspace

GRAPH_COMMAND = "sea.graph"
"""The command that returns a playbook's Mermaid flowchart (its argument: the URI)."""


class SeaServer(LanguageServer):
    """``sea lsp``: a language server over one :class:`Workspace`."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__("sea", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Full)
        self.sea = workspace
        self._analyses: dict[str, tuple[Any, Analysis]] = {}
        self._latest: dict[str, tuple[str, int | None]] = {}
        self._running: set[str] = set()
        self._closed: set[str] = set()
        self._lock = threading.Lock()
        self._frozen = False

    def _update(self, uri: str, text: str, version: int | None) -> list[str]:
        with self._lock:  # one check at a time: the workspace is not shared between threads
            if uri in self._closed:
                return []
            return self.sea.update(uri, text, version)

    async def refresh(self, uri: str, text: str, version: int | None) -> None:
        """Check a document off the protocol's thread, so that the editor's other requests
        are answered meanwhile; changes that arrive during a check are coalesced (only the
        last text is checked next)."""
        self._closed.discard(uri)
        self._latest[uri] = (text, version)
        if uri in self._running:
            return
        self._running.add(uri)
        try:
            while uri in self._latest:
                text, version = self._latest.pop(uri)
                self.publish(await asyncio.to_thread(self._update, uri, text, version))
                if not self._frozen:
                    # what the first check built (modules, models, schemas) lives as long as
                    # the server: the collector need not walk it at every later check
                    gc.freeze()
                    self._frozen = True
        finally:
            self._running.discard(uri)

    def forget(self, uri: str) -> list[str]:
        """A document was closed: drop it; the documents re-checked without it."""
        self._closed.add(uri)
        self._latest.pop(uri, None)
        self._analyses.pop(uri, None)
        with self._lock:
            return self.sea.close(uri)

    def analysis(self, document: Document) -> Analysis:
        """The document's analysis (of its last text that parsed), computed once a text."""
        cached = self._analyses.get(document.uri)
        if cached is not None and cached[0] is document.last_raw:
            return cached[1]
        found = Analysis.of(document.last_raw, self.sea.types, self.sea.index)
        self._analyses[document.uri] = (document.last_raw, found)
        return found

    def publish(self, uris: list[str]) -> None:
        """Send the diagnostics of each document."""
        for uri in uris:
            document = self.sea.documents.get(uri)
            if document is None:
                continue
            lines = Lines(document.text)
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri=uri, version=document.version,
                diagnostics=[to_lsp(d, lines) for d in document.result.diagnostics]))

    def document(self, uri: str) -> Document | None:
        """An open playbook, if that is what ``uri`` is."""
        document = self.sea.documents.get(uri)
        return document if document is not None and document.playbook else None

    def aimed(self, uri: str, position: lsp.Position) -> Aimed | None:
        """What the cursor at ``position`` of the open playbook ``uri`` names (a node id,
        variable or playbook name), with the document read to find it; None: nothing."""
        document = self.document(uri)
        if document is None:
            return None
        spans = Spans.of(document.text)
        analysis = self.analysis(document)
        target = target_at(analysis, spans, spans.lines.offset(position))
        return None if target is None else Aimed(document, spans, analysis, target)


class Aimed(NamedTuple):
    """A name under the cursor and the document it is in (:meth:`SeaServer.aimed`)."""

    document: Document
    spans: Spans
    analysis: Analysis
    target: Target


def build(workspace: Workspace) -> SeaServer:  # noqa: C901, PLR0915 - one handler each
    """A server over ``workspace``, every feature registered.

    Args:
        workspace: The library and tools the documents are checked against.

    Returns:
        The server; ``start_io()`` serves it over stdin and stdout.
    """
    server = SeaServer(workspace)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: SeaServer, params: lsp.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        await ls.refresh(item.uri, item.text, item.version)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: SeaServer, params: lsp.DidChangeTextDocumentParams) -> None:
        text = ls.workspace.get_text_document(params.text_document.uri).source
        await ls.refresh(params.text_document.uri, text, params.text_document.version)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SeaServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.sea.library.refresh()

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SeaServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        again = ls.forget(uri)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))
        ls.publish(again)

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION,
                    lsp.CompletionOptions(trigger_characters=['"', "{", "."]))
    def completion(ls: SeaServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        document = ls.document(params.text_document.uri)
        if document is None:
            return None
        offset = Lines(document.text).offset(params.position)
        scanned = {p: document.text[s + 1:e - 1] for p, (s, e) in scan(document.text).values.items()
                   if p.endswith("/type")}
        items = complete(ls.sea, ls.analysis(document), cursor_at(document.text, offset), scanned)
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: SeaServer, params: lsp.HoverParams) -> lsp.Hover | None:
        document = ls.document(params.text_document.uri)
        if document is None:
            return None
        spans = Spans.of(document.text)
        offset = spans.lines.offset(params.position)
        hit = spans.found.at(offset)
        if hit is None:
            return None
        analysis = ls.analysis(document)
        target = target_at(analysis, spans, offset)
        word = target.name if target is not None and target.kind == "variable" else None
        text = hover_text(ls.sea, analysis, hit[0], hit[1], word)
        if not text:
            return None
        return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text))

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def goto(ls: SeaServer, params: lsp.DefinitionParams) -> list[lsp.Location] | None:
        aimed = ls.aimed(params.text_document.uri, params.position)
        if aimed is None:
            return None
        return definition(ls.sea, aimed.analysis, aimed.spans, aimed.document.uri,
                          aimed.target)

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def references(ls: SeaServer, params: lsp.ReferenceParams) -> list[lsp.Location] | None:
        aimed = ls.aimed(params.text_document.uri, params.position)
        if aimed is None:
            return None
        found = occurrences(aimed.analysis, aimed.spans, aimed.target,
                            params.context.include_declaration)
        return [lsp.Location(aimed.document.uri, aimed.spans.lines.range(*span))
                for span in found]

    @server.feature(lsp.TEXT_DOCUMENT_RENAME)
    def do_rename(ls: SeaServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        aimed = ls.aimed(params.text_document.uri, params.position)
        if aimed is None:
            return None
        try:
            return rename(ls.sea, aimed.document, aimed.analysis, aimed.spans, aimed.target,
                          params.new_name)
        except SeaError as exc:  # the editor shows the message, not a traceback
            raise JsonRpcInvalidParams(str(exc), data={"code": exc.code}) from None

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def outline(ls: SeaServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        document = ls.document(params.text_document.uri)
        if document is None:
            return []
        return symbols(Spans.of(document.text), document.known)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    def actions(ls: SeaServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        document = ls.document(params.text_document.uri)
        if document is None:
            return None
        return code_actions(ls.sea, document, list(params.context.diagnostics))

    @server.command(GRAPH_COMMAND)
    def graph_command(ls: SeaServer, *args: Any) -> str:
        uri = args[0] if args else ""
        document = ls.document(str(uri))
        if document is None:
            raise JsonRpcInvalidParams(f"{uri} is not an open playbook")
        try:
            return graph(document, ls.analysis(document).playbook)
        except SeaError as exc:
            raise JsonRpcInvalidParams(str(exc), data={"code": exc.code}) from None

    return server
