"""Edit the source text of a JSON document in place, keeping everything else as it was.

A rewrite that parses and dumps a document loses its author's layout: the indentation, the
short objects kept on one line, the escapes. :class:`JsonTextEditor` instead changes only
the spans it is asked to (a member's name, a value, a new or removed member) and leaves
every other character untouched, so that a diff shows exactly what changed. New members
copy the whitespace of their neighbours; new values are written compactly on one line,
non-ASCII kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sea.lang.locate import Locator, escape_pointer, unescape_pointer

_DECODER = json.JSONDecoder()
_C = TypeVar("_C", dict[str, Any], list[Any])
_WHITESPACE = " \t\r\n"


class OverlappingEdit(ValueError):
    """Two edits would change the same characters (a bug in the caller's plan)."""


def dump(value: Any) -> str:
    """A value as compact one-line JSON, non-ASCII kept (``{"a": 1}``)."""
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class _Splice:
    start: int
    end: int
    text: str
    order: int


class JsonTextEditor:
    """Planned changes to one JSON text; :meth:`result` applies them all at once.

    Pointers name members of the document as parsed from the text (``document``), which
    must be the text's own parse (same members, same order, no repeated names).
    """

    def __init__(self, text: str, document: Any) -> None:
        self.text = text
        self.document = document
        self._locator = Locator(text)
        self._splices: list[_Splice] = []

    def _value_span(self, pointer: str) -> tuple[int, int]:
        start = self._locator.offset(pointer)
        _, end = _DECODER.raw_decode(self.text, start)
        return start, end

    def _key_span(self, pointer: str) -> tuple[int, int]:
        start = self._locator.offset(pointer, key=True)
        _, end = _DECODER.raw_decode(self.text, start)
        return start, end

    def _splice(self, start: int, end: int, text: str) -> None:
        self._splices.append(_Splice(start, end, text, len(self._splices)))

    def _leading_space(self, key_start: int) -> str:
        """The whitespace between a member's name and the ``{`` or ``,`` before it."""
        i = key_start
        while i > 0 and self.text[i - 1] in _WHITESPACE:
            i -= 1
        return self.text[i:key_start]

    def rename(self, pointer: str, name: str) -> None:
        """Give the member at ``pointer`` a new name (its value and place stay)."""
        start, end = self._key_span(pointer)
        self._splice(start, end, dump(name))

    def replace(self, pointer: str, value: Any) -> None:
        """Replace the value at ``pointer``."""
        start, end = self._value_span(pointer)
        self._splice(start, end, dump(value))

    def insert_after(self, pointer: str, name: str, value: Any) -> None:
        """Add the member ``name: value`` right after the member at ``pointer``, laid out
        like that member (on its own line when it is on its own line)."""
        _, end = self._value_span(pointer)
        space = self._leading_space(self._key_span(pointer)[0]) or " "
        self._splice(end, end, f",{space}{dump(name)}: {dump(value)}")

    def add_member(self, pointer: str, name: str, value: Any) -> None:
        """Add ``name: value`` as the last member of the object at ``pointer``."""
        members = list(_at(self.document, pointer, dict))
        if not members:
            self.replace(pointer, {name: value})
            return
        self.insert_after(f"{pointer}/{escape_pointer(members[-1])}", name, value)

    def replace_items(self, pointer: str, keep: Sequence[int]) -> None:
        """Keep only the items ``keep`` (positions, in order) of the array at ``pointer``."""
        items = _at(self.document, pointer, list)
        self.replace(pointer, [items[i] for i in keep])

    def remove_members(self, pointer: str, names: Sequence[str]) -> None:
        """Remove the named members of the object at ``pointer``, with their commas."""
        keys = list(_at(self.document, pointer, dict))
        gone = set(names)
        member = [f"{pointer}/{escape_pointer(k)}" for k in keys]
        i = 0
        while i < len(keys):
            if keys[i] not in gone:
                i += 1
                continue
            j = i
            while j + 1 < len(keys) and keys[j + 1] in gone:
                j += 1
            if i > 0:  # after the member before: ", ...removed"
                start, end = self._value_span(member[i - 1])[1], self._value_span(member[j])[1]
            elif j + 1 < len(keys):  # before the member after: "removed..., "
                start, end = self._key_span(member[i])[0], self._key_span(member[j + 1])[0]
            else:
                start, end = self._key_span(member[i])[0], self._value_span(member[j])[1]
            self._splice(start, end, "")
            i = j + 1

    def result(self) -> str:
        """The text with every planned change made.

        Raises:
            OverlappingEdit: Two planned changes touch the same characters.
        """
        ordered = sorted(self._splices, key=lambda s: (s.start, s.end, s.order))
        for before, after in zip(ordered, ordered[1:], strict=False):
            if after.start < before.end:
                raise OverlappingEdit(f"edits overlap at offset {after.start}")
        text = self.text
        for splice in reversed(ordered):
            text = text[: splice.start] + splice.text + text[splice.end :]
        return text


def _at(document: Any, pointer: str, kind: type[_C]) -> _C:
    """The object or array at ``pointer`` (``KeyError``/``TypeError`` if there is none)."""
    value = document
    for part in pointer.split("/")[1:] if pointer else ():
        key = unescape_pointer(part)
        value = value[int(key)] if isinstance(value, list) else value[key]
    if not isinstance(value, kind):
        raise TypeError(f"no {kind.__name__} at {pointer!r}")
    return value
