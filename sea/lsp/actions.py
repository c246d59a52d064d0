"""Quick fixes and commands: the fix a diagnostic's hint names, ``sea migrate``'s rewrite,
the Mermaid graph of a playbook.

A hint with exactly one fix becomes a quick fix: ``did you mean `x`?`` replaces the name
the diagnostic points at, a missing argument is added to ``args``. ``sea migrate``'s
rewrites (SAIVerse habits made explicit) are one action on the whole document, as the
command would write the file.
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types as lsp

from sea.errors import Diagnostic
from sea.lang import codes
from sea.lang.jsonedit import JsonTextEditor, OverlappingEdit
from sea.lang.models import Playbook
from sea.lsp.navigation import Spans
from sea.lsp.positions import Lines
from sea.lsp.workspace import Document, Workspace

_DID_YOU_MEAN = re.compile(r"did you mean `([^`]+)`\?")
_MISSING = re.compile(r"requires the argument `([^`]+)`")
SOURCE = "sea"


def to_lsp(diagnostic: Diagnostic, lines: Lines) -> lsp.Diagnostic:
    """An LSP diagnostic of a check's: the token at its line and column, its code, its
    message and hint; ``data`` keeps the pointer and hint for the quick fixes."""
    start = lines.from_checks(diagnostic.line, diagnostic.column)
    message = diagnostic.message + (f"\nhint: {diagnostic.hint}" if diagnostic.hint else "")
    return lsp.Diagnostic(
        range=lines.range(start, lines.token_end(start)),
        message=message,
        severity=lsp.DiagnosticSeverity.Error if diagnostic.severity == "error"
        else lsp.DiagnosticSeverity.Warning,
        code=diagnostic.code,
        source=SOURCE,
        data={"pointer": diagnostic.pointer, "hint": diagnostic.hint or "",
              "message": diagnostic.message},
    )


def _whole(text: str, new: str, title: str, uri: str,
           fixes: list[lsp.Diagnostic] | None = None) -> lsp.CodeAction:
    lines = Lines(text)
    edit = lsp.TextEdit(lines.range(0, len(text)), new)
    return lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=fixes,
                          edit=lsp.WorkspaceEdit(changes={uri: [edit]}))


def _quick_fix(document: Document, spans: Spans, found: lsp.Diagnostic) -> lsp.CodeAction | None:
    data: dict[str, Any] = found.data if isinstance(found.data, dict) else {}
    hint, pointer = str(data.get("hint", "")), str(data.get("pointer", ""))
    suggestion = _DID_YOU_MEAN.search(hint)
    start = spans.lines.offset(found.range.start)
    if suggestion is not None:
        name = suggestion.group(1)
        if document.text.startswith('"', start) or pointer not in spans.found.values:
            editor = JsonTextEditor(document.text, document.raw)
            if spans.found.keys.get(pointer, (None,))[0] == start:
                editor.rename(pointer, name)
            elif spans.found.values.get(pointer, (None,))[0] == start:
                editor.replace(pointer, name)
            else:
                return None
            return _whole(document.text, editor.result(), f"Change to `{name}`",
                          document.uri, [found])
        end = spans.lines.offset(found.range.end)
        root_end = start
        while root_end < end and (document.text[root_end].isalnum()
                                  or document.text[root_end] == "_"):
            root_end += 1
        edit = lsp.TextEdit(spans.lines.range(start, root_end), name)
        return lsp.CodeAction(title=f"Change to `{name}`", kind=lsp.CodeActionKind.QuickFix,
                              diagnostics=[found],
                              edit=lsp.WorkspaceEdit(changes={document.uri: [edit]}))
    missing = _MISSING.search(str(data.get("message", "")))
    if found.code == codes.MISSING_ARGUMENT and missing is not None:
        editor = JsonTextEditor(document.text, document.raw)
        target = _object_at(document.raw, pointer)
        if target is None:
            return None
        editor.add_member(pointer, missing.group(1), "")
        return _whole(document.text, editor.result(), f"Add the argument `{missing.group(1)}`",
                      document.uri, [found])
    return None


def _object_at(raw: Any, pointer: str) -> dict[str, Any] | None:
    from sea.lsp.features import split, value_at

    found = value_at(raw, split(pointer))
    return found if isinstance(found, dict) else None


def code_actions(workspace: Workspace, document: Document,
                 diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """The quick fixes of ``diagnostics`` (those with one fix), then ``sea migrate``'s
    rewrite of the document when it would change it."""
    if not isinstance(document.raw, dict):
        return []
    spans = Spans.of(document.text)
    actions = []
    for found in diagnostics:
        try:
            action = _quick_fix(document, spans, found)
        except (OverlappingEdit, ValueError, KeyError, IndexError):
            action = None
        if action is not None:
            actions.append(action)
    from sea.lang.migrate import migrate_text

    migration = migrate_text(document.text, context=workspace.context())
    if migration.changed and migration.migrated is not None:
        actions.append(_whole(document.text, migration.migrated,
                              f"Apply `sea migrate` ({len(migration.changes)} change"
                              f"{'s' if len(migration.changes) != 1 else ''})",
                              document.uri))
    return actions


def graph(document: Document, salvaged: Playbook | None) -> str:
    """The playbook as a Mermaid flowchart (``sea graph``'s text); a playbook with errors
    is drawn from what its check salvaged.

    Raises:
        UsageError: Nothing of the document could be read as a playbook.
    """
    from sea.errors import UsageError
    from sea.lang.render import to_mermaid

    playbook = document.result.playbook or salvaged
    if playbook is None:
        raise UsageError("the document cannot be read as a playbook; fix its errors to see "
                         "its graph")
    return to_mermaid(playbook)
