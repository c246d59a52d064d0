"""Map JSON pointers to line:column positions in the source text of a JSON document.

The document has already been parsed (by orjson); this is a small position-tracking scanner
that runs only when a diagnostic needs a location. Lines and columns are 1-based; columns
count characters (code points), as editors do.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

import orjson

_WHITESPACE = " \t\r\n"
_LITERAL_PART = re.compile(r'\\(?:u[0-9a-fA-F]{4}|.)|"', re.DOTALL)
"""An escape inside a string literal, or the quote that closes it."""
_MAX_DEPTH = 80
"""Positions are recorded this deep; deeper containers are skipped (the loader rejects
documents nested more than 64 levels)."""


def escape_pointer(segment: str | int) -> str:
    """One RFC 6901 pointer segment (``~`` → ``~0``, ``/`` → ``~1``)."""
    return str(segment).replace("~", "~0").replace("/", "~1")


def unescape_pointer(segment: str) -> str:
    """The member name or index an RFC 6901 pointer segment names (``~1`` → ``/``,
    ``~0`` → ``~``)."""
    return segment.replace("~1", "/").replace("~0", "~")


def join_pointer(*segments: str | int) -> str:
    """A pointer from segments: ``join_pointer("nodes", 3, "id") == "/nodes/3/id"``."""
    return "".join("/" + escape_pointer(s) for s in segments)


@dataclass(slots=True)
class _Entry:
    value: int
    """Offset of the value's first character."""
    key: int | None = None
    """Offset of the member name's opening quote (object members only)."""


@dataclass
class Locator:
    """Positions of every value (and member name) of a JSON text, by pointer."""

    text: str
    _entries: dict[str, _Entry] | None = field(default=None, repr=False)
    _line_starts: list[int] = field(default_factory=list, repr=False)
    _duplicates: list[tuple[str, int, int]] = field(default_factory=list, repr=False)
    _strings: dict[int, _StringMap] = field(default_factory=dict, repr=False)
    """The string literals a position was asked inside, by offset (each mapped once)."""

    def _index(self) -> dict[str, _Entry]:
        if self._entries is None:
            self._entries = {}
            self._line_starts = [0] + [i + 1 for i, c in enumerate(self.text) if c == "\n"]
            scanner = _Scanner(self.text, self._entries)
            try:
                scanner.document()
            except (IndexError, ValueError):
                pass  # not valid JSON: keep what was found
            self._duplicates = scanner.duplicates
        return self._entries

    def _line_col(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def line_column(self, offset: int) -> tuple[int, int]:
        """``(line, column)`` of a source offset."""
        self._index()
        return self._line_col(offset)

    def duplicate_keys(self) -> list[tuple[str, int, int]]:
        """``(pointer, first, again)`` for each member name repeated in its object, in
        source order: the member's pointer, and the source offsets of the name's first and
        repeated occurrence (a JSON parser keeps only the last value)."""
        self._index()
        return list(self._duplicates)

    def offset(self, pointer: str, *, key: bool = False) -> int:
        """Source offset of the value at ``pointer`` (or its member name with ``key=True``).

        A pointer that does not exist falls back to its longest existing prefix.
        """
        entries = self._index()
        current = pointer
        while True:
            entry = entries.get(current)
            if entry is not None:
                if key and entry.key is not None and current == pointer:
                    return entry.key
                return entry.value
            if not current:
                return 0
            current = current.rsplit("/", 1)[0]

    def position(
        self, pointer: str, *, key: bool = False, char_offset: int | None = None
    ) -> tuple[int, int]:
        """``(line, column)`` of the value at ``pointer``.

        Args:
            pointer: RFC 6901 pointer.
            key: Point at the member name instead of the value.
            char_offset: For a string value: the position of this character of the decoded
                string (escapes in the source are accounted for).
        """
        start = self.offset(pointer, key=key)
        if char_offset is not None and not key and self.text[start : start + 1] == '"':
            literal = self._strings.get(start)
            if literal is None:
                literal = self._strings[start] = _StringMap.of(self.text, start)
            start = literal.source_offset(char_offset)
        return self._line_col(start)


@dataclass(frozen=True, slots=True)
class _StringMap:
    """Where the decoded characters of one string literal are in the source, found in one
    pass over it: a character's offset is its index plus the extra source characters of the
    escapes before it, so thousands of positions in one long string cost a lookup each, not
    a walk from the opening quote each."""

    first: int
    """Source offset of the literal's first character (after the quote)."""
    end: int
    """Source offset of the closing quote (the position of any index past the end)."""
    length: int
    """Decoded characters in the literal."""
    escapes: list[int]
    """Decoded index of each escape, ascending."""
    extra: list[int]
    """For each escape: how many more source characters than decoded ones it and the
    escapes before it take."""

    @classmethod
    def of(cls, text: str, start: int) -> _StringMap:
        """The map of the string literal whose opening quote is at ``start``."""
        escapes: list[int] = []
        extra: list[int] = []
        beyond = 0
        end = len(text)
        for part in _LITERAL_PART.finditer(text, start + 1):
            if part[0] == '"':
                end = part.start()
                break
            escapes.append(part.start() - start - 1 - beyond)
            beyond += len(part[0]) - 1
            extra.append(beyond)
        return cls(start + 1, end, end - start - 1 - beyond, escapes, extra)

    def source_offset(self, wanted: int) -> int:
        """Source offset of decoded character ``wanted`` (the closing quote past the end)."""
        if wanted >= self.length:
            return self.end
        before = bisect.bisect_left(self.escapes, wanted)
        return self.first + wanted + (self.extra[before - 1] if before else 0)


class _Scanner:
    """Recursive descent over valid JSON text, recording value offsets by pointer."""

    def __init__(self, text: str, entries: dict[str, _Entry]) -> None:
        self.text = text
        self.pos = 0
        self.entries = entries
        self.duplicates: list[tuple[str, int, int]] = []
        """``(pointer, first key offset, repeated key offset)`` of repeated member names."""

    def _skip(self) -> None:
        text = self.text
        while self.pos < len(text) and text[self.pos] in _WHITESPACE:
            self.pos += 1

    def document(self) -> None:
        """Scan the whole text."""
        self._skip()
        self.value("", None)

    def value(self, pointer: str, key_offset: int | None, depth: int = 0) -> None:
        """Record and skip the value starting at the current position."""
        self._skip()
        self.entries[pointer] = _Entry(self.pos, key_offset)
        char = self.text[self.pos]
        if char in "{[" and depth >= _MAX_DEPTH:
            self._skip_container()
        elif char == "{":
            self._object(pointer, depth)
        elif char == "[":
            self._array(pointer, depth)
        elif char == '"':
            self._string()
        else:
            self._scalar()

    def _string(self) -> str:
        text = self.text
        start = self.pos + 1
        i = start
        while text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        self.pos = i + 1
        raw = text[start:i]
        if "\\" not in raw:
            return raw
        decoded: str = orjson.loads(text[start - 1 : i + 1])
        return decoded

    def _skip_container(self) -> None:
        """Skip a nested object or array without recording inside it (iterative)."""
        depth = 0
        while True:
            char = self.text[self.pos]
            if char == '"':
                self._string()
                continue
            self.pos += 1
            if char in "{[":
                depth += 1
            elif char in "}]":
                depth -= 1
                if depth == 0:
                    return

    def _scalar(self) -> None:
        text = self.text
        i = self.pos
        while i < len(text) and text[i] not in ",]}" + _WHITESPACE:
            i += 1
        if i == self.pos:
            raise ValueError("unexpected character")
        self.pos = i

    def _object(self, pointer: str, depth: int) -> None:
        self.pos += 1
        self._skip()
        if self.text[self.pos] == "}":
            self.pos += 1
            return
        while True:
            self._skip()
            key_offset = self.pos
            name = self._string()
            self._skip()
            self.pos += 1  # ':'
            member = pointer + "/" + escape_pointer(name)
            earlier = self.entries.get(member)
            if earlier is not None and earlier.key is not None:
                self.duplicates.append((member, earlier.key, key_offset))
            self.value(member, key_offset, depth + 1)
            self._skip()
            char = self.text[self.pos]
            self.pos += 1
            if char == "}":
                return

    def _array(self, pointer: str, depth: int) -> None:
        self.pos += 1
        self._skip()
        if self.text[self.pos] == "]":
            self.pos += 1
            return
        index = 0
        while True:
            self.value(f"{pointer}/{index}", None, depth + 1)
            index += 1
            self._skip()
            char = self.text[self.pos]
            self.pos += 1
            if char == "]":
                return
