"""Unified diffs (difflib) of what a spec does to a file, cut to the host's limit, with the
lines added and removed."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Diff:
    """A unified diff's text (possibly cut), its counts, and whether it was cut."""

    text: str = ""
    added: int = 0
    removed: int = 0
    truncated: bool = False


def unified(old: bytes | None, new: bytes | None, path: str, max_chars: int) -> Diff:
    """The diff from ``old`` to ``new`` (``None``: no file) of the file ``path``, git style
    (``a/path``, ``b/path``, ``/dev/null``). Binary content (a NUL byte) is summarized in one
    line with no counts; text is read as UTF-8 (invalid bytes become U+FFFD)."""
    if (old is not None and b"\0" in old) or (new is not None and b"\0" in new):
        return Diff(f"Binary file {path} differs\n" if old != new else "")
    lines = list(difflib.unified_diff(
        _lines(old), _lines(new),
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile="/dev/null" if new is None else f"b/{path}",
        lineterm="",
    ))
    body = lines[2:]
    added = sum(1 for line in body if line.startswith("+"))
    removed = sum(1 for line in body if line.startswith("-"))
    text = "".join(f"{line}\n" for line in lines)
    if len(text) <= max_chars:
        return Diff(text, added, removed)
    cut = f"\n… (diff cut at {max_chars} of {len(text)} characters)\n"
    return Diff(text[:max_chars] + cut, added, removed, truncated=True)


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", errors="replace").splitlines()


def line_count(data: bytes) -> int:
    """How many lines a text has (a last line without a newline counts)."""
    return len(data.decode("utf-8", errors="replace").splitlines())
