"""The tolerant JSON scan under the editor features: on any JSON text it finds every value
where it is; on any prefix of one it never raises and says what the position is inside."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sea.lang.locate import escape_pointer
from sea.lsp.positions import Lines
from sea.lsp.scan import cursor_at, scan

scalars = (st.none() | st.booleans() | st.integers() | st.text(max_size=8)
           | st.floats(allow_nan=False, allow_infinity=False))
documents = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


def pointers(value: Any, pointer: str = "") -> dict[str, Any]:
    found = {pointer: value}
    if isinstance(value, dict):
        for key, item in value.items():
            found.update(pointers(item, f"{pointer}/{escape_pointer(key)}"))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.update(pointers(item, f"{pointer}/{index}"))
    return found


@given(documents, st.integers(0, 2))
def test_every_value_is_found_where_it_is(document: Any, indent: int) -> None:
    text = json.dumps(document, indent=indent or None, ensure_ascii=indent == 1)
    found = scan(text)
    expected = pointers(document)
    assert set(found.values) == set(expected)
    for pointer, (start, end) in found.values.items():
        assert json.loads(text[start:end]) == expected[pointer]


@given(documents, st.data())
def test_a_prefix_never_raises_and_closes_into_json(document: Any, data: st.DataObject) -> None:
    text = json.dumps(document, indent=2)
    cut = data.draw(st.integers(0, len(text)))
    found = scan(text[:cut])
    repaired = found.repaired(text[:cut])
    if repaired is not None:
        json.loads(repaired)  # the well-ended prefix, closed, is JSON
    cursor_at(text, cut)


def test_the_cursor_inside_a_half_typed_value() -> None:
    text = '{"nodes": [{"id": "a", "next": "b'
    cursor = cursor_at(text, len(text))
    assert (cursor.pointer, cursor.where, cursor.prefix) == ("/nodes/0/next", "value", "b")
    cursor = cursor_at('{"nodes": [{"id": "a", "ne', 100)
    assert (cursor.pointer, cursor.where, cursor.prefix) == ("/nodes/0", "key", "ne")


def test_positions_count_utf16_units() -> None:
    lines = Lines('{"a": "😀x"}\n{')
    offset = '{"a": "😀x"}'.index("x")
    position = lines.position(offset)
    assert (position.line, position.character) == (0, offset + 1)  # the emoji is two units
    assert lines.offset(position) == offset
    assert lines.offset(lines.position(len(lines.text))) == len(lines.text)
