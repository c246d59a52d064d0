"""``json_size`` counts a value's compact JSON text without writing it, one character more
per non-empty list or object (its separators are counted one per member): checked against the text
itself on generated JSON values, and on values that are not JSON data."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sea.jsontypes import json_size

# strings without characters JSON escapes (the count leaves escapes out), and 0 and 1: a
# whole number's digits are estimated from its bits, exact or one more (tested apart)
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs"),
                                      blacklist_characters='"\\'), max_size=20)
LEAVES = st.none() | st.booleans() | st.integers(0, 1) | TEXT
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
    max_leaves=30,
)


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _containers(value: Any) -> int:
    """How many non-empty lists and objects ``value`` holds, itself included."""
    if isinstance(value, dict):
        return bool(value) + sum(_containers(v) for v in value.values())
    if isinstance(value, list):
        return bool(value) + sum(_containers(v) for v in value)
    return 0


def _expected(value: Any) -> int:
    """The text's length, and one per non-empty list or object (a separator per member)."""
    return len(_text(value)) + _containers(value)


@given(VALUES)
def test_the_count_is_the_length_of_the_compact_json_text(value: Any) -> None:
    assert json_size(value) == _expected(value)


@given(VALUES)
def test_with_a_limit_the_count_passes_it_exactly_when_the_whole_count_does(
    value: Any,
) -> None:
    size = _expected(value)
    for limit in (0, size // 2, size - 1, size, size + 1):
        assert (json_size(value, limit) > limit) == (size > limit), limit


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                                    allow_infinity=False)
                    | TEXT,
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(TEXT, inner, max_size=4), max_leaves=20))
def test_the_count_never_falls_short_of_the_text(value: Any) -> None:
    assert json_size(value) >= len(_text(value))


def test_tuples_non_string_keys_and_other_objects_are_counted() -> None:
    assert json_size((1, "ab")) == len('[1,"ab"]') + 1
    assert json_size({1: "x"}) == len('{"1":"x"}') + 1
    assert json_size([1.5]) == len("[1.5]") + 1
    assert json_size(object()) == len('"object"')
