"""Thousands of problems in one string are located in linear time: a template that reads
10,000 undefined variables is reported with the right line and column for each, and finding
those positions reads the source a bounded number of times per character.

Before: each reference's column was found by walking its string from the opening quote, so
10,000 references in one template took 77 s of CPU in ``sea validate`` (2,500 took 23 s).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, SupportsIndex

import pytest

from sea.lang import codes
from sea.lang.loader import MAX_DIAGNOSTICS, check_document
from sea.lang.locate import Locator

ROOT = Path(__file__).resolve().parents[2]
POINTER = "/nodes/0/assignments/text"
LIMIT_S = 60
"""The quadratic locator needed more than this for 10,000 references; the linear one a
second or two (a guard against a hang, not a timing)."""


def _reference(i: int) -> str:
    return f"{{u{i:05d}}}"


def _template(count: int) -> str:
    """``count`` undefined references, with characters JSON escapes between them (``é`` is
    written ``\\u00e9``, a tab ``\\t``), so source and decoded offsets drift apart."""
    return "".join(f"{_reference(i)} é\t" for i in range(count))


def _playbook(count: int) -> str:
    return json.dumps({"name": "unknowns", "description": "Reads what is never defined.",
                       "start_node": "s",
                       "nodes": [{"id": "s", "type": "set",
                                  "assignments": {"text": _template(count)}}]}, indent=2)


def _naive(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a source offset, by counting."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _expected(text: str, i: int) -> tuple[int, int]:
    """Where reference ``i`` is in the source: its ``{`` (written as is, never escaped)."""
    offset = text.find(_reference(i))
    assert offset > 0
    return _naive(text, offset)


def _decoded_offset(i: int) -> int:
    """The character of the decoded template where reference ``i`` begins."""
    return i * len(f"{_reference(0)} é\t")


def test_ten_thousand_undefined_variables_are_reported_where_they_are() -> None:
    text = _playbook(10_000)
    found = check_document(text, file="unknowns.json").diagnostics
    assert len(found) == MAX_DIAGNOSTICS + 1
    assert found[-1].code == codes.TOO_MANY_DIAGNOSTICS
    assert "9,900 more problems" in found[-1].message
    for i, diagnostic in enumerate(found[:-1]):
        assert diagnostic.code == codes.UNDEFINED_VARIABLE
        assert f"`u{i:05d}`" in diagnostic.message
        assert (diagnostic.line, diagnostic.column) == _expected(text, i)


def test_every_reference_of_ten_thousand_has_its_line_and_column() -> None:
    text = _playbook(10_000)
    locator = Locator(text)
    line, column = _expected(text, 0)
    line_start = text.find(_reference(0)) - column + 1
    offset = 0
    for i in range(10_000):
        offset = text.index(_reference(i), offset)  # the template is on one line
        where = locator.position(POINTER, char_offset=_decoded_offset(i))
        assert where == (line, offset - line_start + 1), i
        if i % 500 == 0:  # a sample against the counting locator
            assert where == _expected(text, i)


def test_positions_past_the_end_and_on_escapes_match_the_source() -> None:
    text = json.dumps({"s": "aé\tb"}) + "\n"  # {"s": "a\u00e9\tb"}
    locator = Locator(text)
    source = [text.index("a\\"), text.index("\\u"), text.index("\\t"), text.index("b\"")]
    for wanted, offset in enumerate(source):
        assert locator.position("/s", char_offset=wanted) == _naive(text, offset)
    closing = text.rindex('"')
    assert locator.position("/s", char_offset=4) == _naive(text, closing)
    assert locator.position("/s", char_offset=99) == _naive(text, closing)


class _CountingText(str):
    """Source text that counts how often a character (or a slice) of it is read."""

    reads = 0

    def __getitem__(self, key: SupportsIndex | slice) -> str:
        _CountingText.reads += 1
        return str.__getitem__(self, key)


@pytest.mark.parametrize("count", [500, 1_000])
def test_locating_every_reference_reads_the_source_a_bounded_number_of_times(count: int) -> None:
    plain = _playbook(count)
    text = _CountingText(plain)
    _CountingText.reads = 0
    locator = Locator(text)
    for i in range(count):
        assert locator.position(POINTER, char_offset=_decoded_offset(i)) == _expected(plain, i)
    assert _CountingText.reads <= 3 * len(plain)  # count x half the string each, before


def test_sea_validate_reports_ten_thousand_in_one_template(tmp_path: Path) -> None:
    path = tmp_path / "unknowns.json"
    text = _playbook(10_000)
    path.write_text(text)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sea", "validate", "--json", "--no-cache",
             str(path)], cwd=ROOT, capture_output=True, text=True, timeout=LIMIT_S, check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"sea validate still ran after {LIMIT_S}s (locating is quadratic again)")
    assert done.returncode == 1, done.stderr
    report: Any = json.loads(done.stdout)
    assert isinstance(report, list)
    listed = [d for d in report if d["code"] == codes.UNDEFINED_VARIABLE]
    assert len(listed) == MAX_DIAGNOSTICS
    for i, diagnostic in enumerate(listed):
        assert (diagnostic["line"], diagnostic["column"]) == _expected(text, i)
