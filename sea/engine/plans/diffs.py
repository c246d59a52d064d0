"""Unified diffs (difflib) of what a spec does to a file, cut to the host's limit, with the
lines added and removed.

difflib's matcher takes time quadratic in the lines it compares when they share many short
matches (a file changed on every other line), so the lines the two texts share at their
start and end are set aside first (linear), and only the part between them is compared, when
it has at most ``max_lines`` lines (``PlanPolicy.max_diff_lines``). A larger changed part
gets no line diff: the diff says so, and the lines added and removed are counted as the
lines of one text that the other lacks (a multiset difference, linear too).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass

CONTEXT = 3
"""Lines of context around each change (difflib's and git's default)."""

_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


@dataclass(frozen=True, slots=True)
class Diff:
    """A unified diff's text (possibly cut), its counts, and whether it was cut."""

    text: str = ""
    added: int = 0
    removed: int = 0
    truncated: bool = False


def unified(old: bytes | None, new: bytes | None, path: str, max_chars: int,
            max_lines: int = 10_000) -> Diff:
    """The diff from ``old`` to ``new`` (``None``: no file) of the file ``path``, git style
    (``a/path``, ``b/path``, ``/dev/null``). Binary content (a NUL byte) is summarized in one
    line with no counts; text is read as UTF-8 (invalid bytes become U+FFFD). A changed part
    of more than ``max_lines`` lines (old and new together) gets no line diff (see the
    module's text)."""
    if (old is not None and b"\0" in old) or (new is not None and b"\0" in new):
        return Diff(f"Binary file {path} differs\n" if old != new else "")
    a, b = _lines(old), _lines(new)
    start, a_end, b_end = _changed(a, b)
    fromfile = "/dev/null" if old is None else f"a/{path}"
    tofile = "/dev/null" if new is None else f"b/{path}"
    changed = (a_end - start) + (b_end - start)
    if a_end > start and b_end > start and changed > max_lines:
        added = sum((Counter(b[start:b_end]) - Counter(a[start:a_end])).values())
        removed = sum((Counter(a[start:a_end]) - Counter(b[start:b_end])).values())
        text = (f"--- {fromfile}\n+++ {tofile}\n… (no line diff: the changed part has "
                f"{changed} lines, over the limit of {max_lines}; +{added} -{removed} lines "
                "counted)\n")
        return _cut(Diff(text, added, removed, truncated=True), max_chars)
    low = max(0, start - CONTEXT)
    lines = list(difflib.unified_diff(
        a[low:a_end + CONTEXT], b[low:b_end + CONTEXT], fromfile=fromfile, tofile=tofile,
        lineterm=""))
    body = lines[2:]
    added = sum(1 for line in body if line.startswith("+"))
    removed = sum(1 for line in body if line.startswith("-"))
    text = "".join(f"{_shifted(line, low)}\n" for line in lines)
    return _cut(Diff(text, added, removed), max_chars)


def _changed(a: list[str], b: list[str]) -> tuple[int, int, int]:
    """Where the texts start to differ, and where (in each) they stop differing."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    a_end, b_end = len(a), len(b)
    while a_end > start and b_end > start and a[a_end - 1] == b[b_end - 1]:
        a_end -= 1
        b_end -= 1
    return start, a_end, b_end


def _shifted(line: str, offset: int) -> str:
    """A hunk header of a diff of the texts from line ``offset`` on, as of the whole texts."""
    found = _HUNK.fullmatch(line) if offset and line.startswith("@@") else None
    if found is None:
        return line
    old_start, old_len, new_start, new_len = found.groups()
    return (f"@@ -{int(old_start) + offset}{old_len or ''} "
            f"+{int(new_start) + offset}{new_len or ''} @@")


def _cut(diff: Diff, max_chars: int) -> Diff:
    if len(diff.text) <= max_chars:
        return diff
    cut = f"\n… (diff cut at {max_chars} of {len(diff.text)} characters)\n"
    return Diff(diff.text[:max_chars] + cut, diff.added, diff.removed, truncated=True)


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", errors="replace").splitlines()


def line_count(data: bytes) -> int:
    """How many lines a text has (a last line without a newline counts)."""
    return len(data.decode("utf-8", errors="replace").splitlines())
