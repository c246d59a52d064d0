"""Positions: source offsets (Python characters), the checks' 1-based line and column, and
the Language Server Protocol's 0-based line and UTF-16 character."""

from __future__ import annotations

import bisect
import re

from lsprotocol import types as lsp

_IDENTIFIER = re.compile(r"[A-Za-z0-9_.\-]+")


def _utf16(text: str) -> int:
    """How many UTF-16 code units ``text`` takes."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


class Lines:
    """The line starts of one text, to convert offsets and positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]

    def position(self, offset: int) -> lsp.Position:
        """The LSP position of a source offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        return lsp.Position(line, _utf16(self.text[self.starts[line]:offset]))

    def offset(self, position: lsp.Position) -> int:
        """The source offset of an LSP position (clamped to the text)."""
        if position.line >= len(self.starts):
            return len(self.text)
        start = self.starts[position.line]
        end = self.starts[position.line + 1] - 1 if position.line + 1 < len(self.starts) \
            else len(self.text)
        units = 0
        for index in range(start, end):
            if units >= position.character:
                return index
            units += 2 if ord(self.text[index]) > 0xFFFF else 1
        return end

    def range(self, start: int, end: int) -> lsp.Range:
        """The LSP range of source offsets ``[start, end)``."""
        return lsp.Range(self.position(start), self.position(end))

    def from_checks(self, line: int | None, column: int | None) -> int:
        """The source offset of a diagnostic's 1-based line and column (code points)."""
        if line is None:
            return 0
        index = min(max(line, 1), len(self.starts)) - 1
        return min(self.starts[index] + max((column or 1) - 1, 0), len(self.text))

    def token_end(self, start: int) -> int:
        """The end of the token at ``start``: a string literal, an identifier inside a
        string (a template's variable), or a scalar; at least one character."""
        text = self.text
        if text.startswith('"', start):
            i = start + 1
            while i < len(text) and text[i] not in '"\n':
                i += 2 if text[i] == "\\" else 1
            return min(i + 1, len(text))
        if start < len(text) and text[start] in "{[":
            return start + 1
        match = _IDENTIFIER.match(text, start)
        return match.end() if match and match.end() > start else min(start + 1, len(text))
