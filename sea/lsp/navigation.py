"""Go to definition, find references, rename and the outline (document symbols).

The names an author navigates are node ids (the node, every ``next`` to it), variables (the
nodes that define them, every read) and playbooks (the file, every caller). Renames edit
only the spans of those names, so the rest of the text stays as written and the result is
valid JSON with the same meaning.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from sea.errors import UsageError
from sea.lang.locate import Locator
from sea.lang.node import Read
from sea.lsp.analysis import Analysis, node_targets, raw_nodes
from sea.lsp.features import PLAYBOOK_FIELDS, split
from sea.lsp.positions import Lines
from sea.lsp.scan import Scan, scan
from sea.lsp.workspace import Document, Workspace

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
_NOT_A_DEFINITION = ("id", "type", "next", "error_next", "conditional_next", "playbook",
                     "action", "available_tools", "description", "prompt", "text")


@dataclass
class Target:
    """What a position names: ``kind`` is ``node``, ``variable`` or ``playbook``."""

    kind: str
    name: str


@dataclass
class Spans:
    """One text, scanned: its lines and the spans of its values and member names."""

    text: str
    lines: Lines
    found: Scan

    @classmethod
    def of(cls, text: str) -> Spans:
        """Scan ``text``."""
        return cls(text, Lines(text), scan(text))

    def value(self, pointer: str) -> lsp.Range | None:
        """The range of the value at ``pointer``."""
        span = self.found.values.get(pointer)
        return None if span is None else self.lines.range(*span)


def target_at(analysis: Analysis, spans: Spans, offset: int) -> Target | None:
    """The node id, variable or playbook name at ``offset``."""
    hit = spans.found.at(offset)
    if hit is None:
        return None
    pointer, is_key = hit
    if is_key:
        return None
    start, end = spans.found.values[pointer]
    word = _word_at(spans.text, start, end, offset)
    if word is not None and word in {*analysis.defined, *analysis.reads}:
        return Target("variable", word)
    segments = split(pointer)
    value = spans.text[start:end]
    try:
        decoded = json.loads(value)
    except ValueError:
        return None
    if not isinstance(decoded, str):
        return None
    if (len(segments) == 3 and segments[2] == "id") or \
            any(p == pointer for p, _ in node_targets(analysis.raw)):
        return Target("node", decoded)
    if len(segments) >= 3 and segments[0] == "nodes" and segments[2] in PLAYBOOK_FIELDS:
        return Target("playbook", decoded)
    if segments == ["name"]:
        return Target("playbook", decoded)
    if decoded in analysis.defined:
        return Target("variable", decoded)
    return None


def _word_at(text: str, start: int, end: int, offset: int) -> str | None:
    """The variable name inside a string at ``offset`` (``{name.path}`` or a CEL word)."""
    if not text.startswith('"', start):
        return None
    left = offset
    while left > start + 1 and re.match(r"[A-Za-z0-9_]", text[left - 1]):
        left -= 1
    right = offset
    while right < end - 1 and re.match(r"[A-Za-z0-9_]", text[right]):
        right += 1
    word = text[left:right]
    return word if word and not word[0].isdigit() else None


def _read_span(locator: Locator, lines: Lines, read: Read) -> tuple[int, int]:
    """The source span of a read's variable name."""
    line, column = locator.position(read.pointer, char_offset=read.char_offset or 0)
    start = lines.from_checks(line, column)
    if read.char_offset is None and lines.text.startswith('"', start):
        start += 1
    elif read.char_offset is not None and lines.text.startswith("{", start):
        start += 1
    return start, start + len(read.root)


def _definition_spans(analysis: Analysis, spans: Spans, name: str) -> list[tuple[int, int]]:
    """Where ``name`` is written by the parameters and nodes that define it."""
    found = []
    for index in analysis.defined.get(name, []):
        base = "/input_schema" if index == -1 else f"/nodes/{index}"
        for pointer, span in [*spans.found.values.items(), *spans.found.keys.items()]:
            if not pointer.startswith(base + "/"):
                continue
            rest = split(pointer[len(base):])
            if index != -1 and rest[0] in _NOT_A_DEFINITION:
                continue
            if spans.text[span[0]:span[1]] != json.dumps(name):
                continue
            if index == -1 and rest[-1] != "name":  # a parameter is defined by its `name`
                continue
            found.append(span)
    return sorted(set(found))


def node_definition(spans: Spans, raw: Any, node_id: str) -> lsp.Range | None:
    """The range of the node's ``id`` value."""
    ref = next((r for r in raw_nodes(raw) if r.id == node_id), None)
    return None if ref is None else spans.value(f"{ref.pointer}/id")


def occurrences(analysis: Analysis, spans: Spans, target: Target,
                declaration: bool = True) -> list[tuple[int, int]]:
    """The spans of every occurrence of a node id or variable in this document."""
    if target.kind == "node":
        found = [spans.found.values[p] for p, v in node_targets(analysis.raw)
                 if v == target.name and p in spans.found.values]
        ref = next((r for r in raw_nodes(analysis.raw) if r.id == target.name), None)
        if declaration and ref is not None and f"{ref.pointer}/id" in spans.found.values:
            found.append(spans.found.values[f"{ref.pointer}/id"])
        return sorted(found)
    if target.kind == "variable":
        locator = Locator(spans.text)
        found = [_read_span(locator, spans.lines, r) for r in analysis.reads.get(target.name, [])]
        if declaration:
            found += _definition_spans(analysis, spans, target.name)
        return sorted(set(found))
    return []


def definition(workspace: Workspace, analysis: Analysis, spans: Spans, uri: str,
               target: Target) -> list[lsp.Location]:
    """Where a node, variable or playbook is defined."""
    if target.kind == "node":
        found = node_definition(spans, analysis.raw, target.name)
        return [] if found is None else [lsp.Location(uri, found)]
    if target.kind == "variable":
        return [lsp.Location(uri, spans.lines.range(*span))
                for span in _definition_spans(analysis, spans, target.name)]
    document = workspace.open_playbook(target.name)
    if document is not None:
        return [lsp.Location(document.uri, lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)))]
    try:
        path = workspace.library.path(target.name)
    except LookupError:
        return []
    return [lsp.Location(path.resolve().as_uri(),
                         lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)))]


def _edits(spans: Spans, found: list[tuple[int, int]], old: str, new: str,
           quoted: bool) -> list[lsp.TextEdit]:
    edits = []
    for start, end in found:
        literal = spans.text[start:end]
        text = json.dumps(new, ensure_ascii=False) if quoted and literal.startswith('"') else new
        if not quoted or literal.startswith('"'):
            edits.append(lsp.TextEdit(spans.lines.range(start, end), text))
    return edits


def rename(workspace: Workspace, document: Document, analysis: Analysis, spans: Spans,
           target: Target, new: str) -> lsp.WorkspaceEdit:
    """The edit that renames a node id or a variable in this document, or a playbook here
    and in every caller (open or in the library).

    Raises:
        UsageError: ``new`` is not a valid name.
    """
    if not _NAME.match(new):
        raise UsageError(f"`{new}` is not a valid name: use letters, digits, `_` and `-`, "
                         "starting with a letter or `_`")
    if target.kind == "node":
        found = occurrences(analysis, spans, target)
        return lsp.WorkspaceEdit(changes={document.uri: _edits(spans, found, target.name, new,
                                                                True)})
    if target.kind == "variable":
        locator = Locator(spans.text)
        reads = [_read_span(locator, spans.lines, r) for r in analysis.reads[target.name]] \
            if target.name in analysis.reads else []
        edits = [lsp.TextEdit(spans.lines.range(*span), new) for span in sorted(set(reads))]
        edits += _edits(spans, _definition_spans(analysis, spans, target.name), target.name,
                        new, True)
        return lsp.WorkspaceEdit(changes={document.uri: edits})
    return _rename_playbook(workspace, target.name, new)


def _callers(workspace: Workspace) -> dict[str, str]:
    """Every playbook text the library or the editor holds, by URI (the open ones' as
    typed)."""
    from sea.lang.files import read_playbook_bytes

    texts = {d.uri: d.text for d in workspace.documents.values() if d.playbook}
    open_paths = {d.path.resolve() for d in workspace.documents.values() if d.path is not None}
    for name in workspace.library.names():
        path: Path = workspace.library.path(name)
        if path.resolve() in open_paths or "_data" in path.parts or \
                path.parent == _bundled():
            continue
        try:
            texts[path.resolve().as_uri()] = read_playbook_bytes(path).decode("utf-8")
        except (OSError, ValueError):
            continue
    return texts


def _bundled() -> Path:
    from sea.resources import bundled_playbooks_dir

    return bundled_playbooks_dir()


def _rename_playbook(workspace: Workspace, old: str, new: str) -> lsp.WorkspaceEdit:
    changes: dict[str, list[lsp.TextEdit]] = {}
    for uri, text in _callers(workspace).items():
        spans = Spans.of(text)
        try:
            raw = json.loads(text)
        except ValueError:
            continue
        pointers = ["/name"] if isinstance(raw, dict) and raw.get("name") == old else []
        for ref in raw_nodes(raw):
            node = raw["nodes"][ref.index]
            if node.get("playbook") == old:
                pointers.append(f"{ref.pointer}/playbook")
            allowed = node.get("allowed_playbooks")
            for i, item in enumerate(allowed if isinstance(allowed, list) else ()):
                if item == old:
                    pointers.append(f"{ref.pointer}/allowed_playbooks/{i}")
        found = [spans.found.values[p] for p in pointers if p in spans.found.values]
        if found:
            changes[uri] = _edits(spans, found, old, new, True)
    return lsp.WorkspaceEdit(changes=changes)


def symbols(spans: Spans, raw: Any) -> list[lsp.DocumentSymbol]:
    """The outline: one symbol per node (its id, its type), in document order."""
    found = []
    for ref in raw_nodes(raw):
        whole = spans.found.values.get(ref.pointer)
        selection = spans.found.values.get(f"{ref.pointer}/id")
        if whole is None or selection is None:
            continue
        found.append(lsp.DocumentSymbol(
            name=ref.id, detail=ref.type or "", kind=lsp.SymbolKind.Function,
            range=spans.lines.range(*whole), selection_range=spans.lines.range(*selection)))
    return found

