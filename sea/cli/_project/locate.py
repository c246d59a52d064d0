"""Where a key is in a TOML text: ``tomllib`` gives values without positions, and a located
error needs a line and a column.

The locator reads the text line by line: table headers (``[model]``, ``[tool.sea]``), keys
(``name = ...``, ``model.name = ...``, quoted keys) and the keys of an inline table on the
key's line (``options = { api_key = ... }``). A key it cannot find is placed at its
nearest located ancestor (a table's header), else at the file's first line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SEGMENT = re.compile(r"""\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*""")


def _dotted(text: str, start: int) -> tuple[list[str], int] | None:
    """The dotted key at ``text[start:]`` and where it ends, if one is there."""
    parts: list[str] = []
    at = start
    while True:
        found = _SEGMENT.match(text, at)
        if found is None or found.end() == at:
            return None
        parts.append(next(g for g in found.groups() if g is not None))
        at = found.end()
        if at < len(text) and text[at] == ".":
            at += 1
            continue
        return parts, at


def locate(text: str, path: Sequence[str]) -> tuple[int, int]:
    """The 1-based line and column of the key ``path`` (its parts) in ``text``."""
    target = list(path)
    best: tuple[int, tuple[int, int]] = (0, (1, 1))
    table: list[str] = []
    in_string: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string is not None:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        stripped = line.lstrip()
        column = len(line) - len(stripped) + 1
        if stripped.startswith("["):
            depth = 2 if stripped.startswith("[[") else 1
            key = _dotted(stripped, depth)
            if key is not None:
                table = key[0]
                best = _better(best, table, target, (number, column + depth))
            continue
        key = _dotted(stripped, 0)
        if key is None or not stripped[key[1]:].startswith("="):
            continue
        full = table + key[0]
        if full == target:
            return number, column
        best = _better(best, full, target, (number, column))
        if target[: len(full)] == full:  # an inline table: look for the rest on this line
            inner = _inline(stripped, key[1], target[len(full):])
            if inner is not None:
                return number, column + inner
        for quote in ('"""', "'''"):
            if stripped.count(quote) % 2 == 1:
                in_string = quote
    return best[1]


def _better(best: tuple[int, tuple[int, int]], found: list[str], target: list[str],
            where: tuple[int, int]) -> tuple[int, tuple[int, int]]:
    """The longer of ``best`` and ``found`` when ``found`` is an ancestor of the target."""
    if target[: len(found)] == found and len(found) > best[0]:
        return len(found), where
    return best


def _inline(line: str, start: int, rest: list[str]) -> int | None:
    """The offset in ``line`` of the inline key ``rest`` after ``start``, if there."""
    at = start
    for name in rest:
        found = re.compile(rf"""[{{,]\s*(?:"{re.escape(name)}"|'{re.escape(name)}'|"""
                           rf"""{re.escape(name)})\s*=""").search(line, at)
        if found is None:
            return None
        after = found.group(0)[1:]
        at = found.start() + 1 + len(after) - len(after.lstrip())
    return at
