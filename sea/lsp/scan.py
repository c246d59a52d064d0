"""A tolerant scan of a JSON text: where each value and member name is, and what the cursor
is inside of.

The loader's :class:`~sea.lang.locate.Locator` finds where a pointer starts; an editor also
needs where it ends (a diagnostic's range, the span a rename replaces) and the other way
round: which member a position is in, even while the text is half typed and not JSON yet
(completion after ``"next": "``). :func:`scan` does both in one pass that never raises: it
stops at the first character that cannot continue the document and keeps what it found.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Final

from sea.lang.locate import escape_pointer

MAX_SCAN_DEPTH: Final = 64
"""Nesting deeper than this stops the scan (the loader reports such documents: SEA0xx)."""

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*')
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
"""A JSON number or literal (a half-typed one, ``tru``, stops the scan there)."""
_SPACE = re.compile(r"[ \t\r\n]*")


@dataclass
class _Frame:
    pointer: str
    is_object: bool
    key: str | None = None
    expecting: str = "key"
    """``key``, ``colon``, ``value`` or ``comma``."""
    index: int = 0


@dataclass
class Cursor:
    """Where a position is: the member it is in, and the string typed so far there."""

    pointer: str = ""
    """The innermost container (or, for a value, the member) the position is in."""
    where: str = "none"
    """``key`` (a member's name), ``value`` (a member's or item's value) or ``none``."""
    prefix: str = ""
    """The string typed so far (without its opening quote) when inside a string."""
    in_string: bool = False
    start: int | None = None
    """Offset of the string's opening quote when inside one."""


@dataclass
class Scan:
    """The spans found (``(start, end)`` source offsets, end exclusive), by pointer."""

    values: dict[str, tuple[int, int]] = field(default_factory=dict)
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)
    cursor: Cursor = field(default_factory=Cursor)
    """Where the scan ended (the end of the text, or where it could not continue)."""
    checkpoint: tuple[int, str] = (0, "")
    """The last place the text could have ended well: the offset after the last value or
    opening bracket, and the brackets that would close what is open there."""

    def repaired(self, text: str) -> str | None:
        """The longest prefix of ``text`` that ends well, closed: a half-typed document's
        part that can be checked (``None`` when nothing is open: no prefix to close)."""
        end, closers = self.checkpoint
        return text[:end] + closers if closers else None

    def at(self, offset: int) -> tuple[str, bool] | None:
        """The innermost member name or scalar value containing ``offset``: its pointer,
        and whether it is the name."""
        best: tuple[int, str, bool] | None = None
        for spans, is_key in ((self.keys, True), (self.values, False)):
            for pointer, (start, end) in spans.items():
                if start <= offset <= end and (best is None or end - start < best[0]):
                    best = (end - start, pointer, is_key)
        return None if best is None else (best[1], best[2])


def _decode(literal: str) -> str:
    """A string literal's value (an unterminated one's as typed so far)."""
    closed = len(literal) > 1 and literal.endswith('"') and re.fullmatch(
        r'"(?:[^"\\]|\\.)*"', literal) is not None
    try:
        value = json.loads(literal if closed else literal + '"')
    except ValueError:
        return literal.strip('"')
    return value if isinstance(value, str) else literal


def scan(text: str) -> Scan:  # noqa: C901, PLR0915 - one tokenizer loop
    """Scan ``text`` as far as it is JSON (never raises)."""
    found = Scan()
    stack: list[_Frame] = []
    opened: list[int] = []
    i, n = 0, len(text)
    done = False

    def value_pointer() -> str | None:
        if not stack:
            return "" if not done else None
        top = stack[-1]
        if top.is_object:
            return None if top.expecting != "value" or top.key is None else (
                f"{top.pointer}/{escape_pointer(top.key)}")
        return None if top.expecting != "value" else f"{top.pointer}/{top.index}"

    def closers() -> str:
        return "".join("}" if frame.is_object else "]" for frame in reversed(stack))

    def finished(end: int) -> None:
        nonlocal done
        if not stack:
            done = True
            return
        stack[-1].expecting = "comma"
        found.checkpoint = (end, closers())

    while i < n:
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if i >= n:
            break
        char = text[i]
        top = stack[-1] if stack else None
        if char == '"':
            match = _STRING.match(text, i)
            assert match is not None
            closed = text.startswith('"', match.end())
            end = match.end() + closed
            literal = text[i:end]
            if top is not None and top.is_object and top.expecting == "key":
                top.key = _decode(literal)
                if not closed:
                    found.cursor = Cursor(top.pointer, "key", _decode(literal), True, i)
                    return found
                found.keys[f"{top.pointer}/{escape_pointer(top.key)}"] = (i, end)
                top.expecting = "colon"
                i = end
                continue
            pointer = value_pointer()
            if pointer is None:
                break
            if not closed:
                found.cursor = Cursor(pointer, "value", _decode(literal), True, i)
                return found
            found.values[pointer] = (i, end)
            finished(end)
            i = end
            continue
        if char in "{[":
            pointer = value_pointer()
            if pointer is None or len(stack) >= MAX_SCAN_DEPTH:
                break
            stack.append(_Frame(pointer, char == "{", expecting="key" if char == "{" else "value"))
            opened.append(i)
            i += 1
            found.checkpoint = (i, closers())
            continue
        if char in "}]":
            if top is None or top.is_object != (char == "}"):
                break
            found.values[top.pointer] = (opened.pop(), i + 1)
            stack.pop()
            finished(i + 1)
            i += 1
            continue
        if char == ":":
            if top is None or not top.is_object or top.expecting != "colon":
                break
            top.expecting = "value"
            i += 1
            continue
        if char == ",":
            if top is None or top.expecting != "comma":
                break
            if top.is_object:
                top.expecting, top.key = "key", None
            else:
                top.expecting, top.index = "value", top.index + 1
            i += 1
            continue
        match = _SCALAR.match(text, i)
        pointer = value_pointer()
        if match is None or pointer is None:
            break
        found.values[pointer] = (i, match.end())
        finished(match.end())
        i = match.end()
    if stack:
        top = stack[-1]
        if top.is_object and top.expecting == "key":
            found.cursor = Cursor(top.pointer, "key")
        elif top.is_object and top.expecting in ("value", "colon") and top.key is not None:
            found.cursor = Cursor(f"{top.pointer}/{escape_pointer(top.key)}", "value")
        elif not top.is_object and top.expecting == "value":
            found.cursor = Cursor(f"{top.pointer}/{top.index}", "value")
        else:
            found.cursor = Cursor(top.pointer, "none")
    return found


def cursor_at(text: str, offset: int) -> Cursor:
    """Where ``offset`` is: the scan of the text before it ends there."""
    return scan(text[:offset]).cursor
