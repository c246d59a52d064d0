"""conditional_next: JSON-typed case keys, ordering operators, defaults."""

from typing import Any

import pytest

from sea.lang.conditions import case_key_value, choose_target
from sea.lang.node import ConditionalNext


def cond(cases: dict[str, str | None], op: str = "eq", **kw: Any) -> ConditionalNext:
    return ConditionalNext.model_validate({"field": "v", "operator": op, "cases": cases, **kw})


@pytest.mark.parametrize(
    ("value", "target"),
    [
        (True, "yes"),
        (False, "no"),
        ("true", "yes"),
        ("True", "other"),
        (None, "other"),
    ],
)
def test_boolean_keys_match_booleans_and_string_flags(value: Any, target: str) -> None:
    assert (
        choose_target(cond({"true": "yes", "false": "no"}, default="other"), {"v": value}) == target
    )


@pytest.mark.parametrize(
    ("value", "target"), [(5, "five"), (5.0, "five"), ("5", "five"), (6, None)]
)
def test_numeric_keys_match_numbers(value: Any, target: str | None) -> None:
    assert choose_target(cond({"5": "five"}), {"v": value}) == target


def test_null_key_matches_missing_and_null() -> None:
    c = cond({"null": "none", "x": "x"})
    assert choose_target(c, {}) == "none"
    assert choose_target(c, {"v": None}) == "none"
    assert choose_target(c, {"v": "x"}) == "x"


def test_strings_do_not_match_numbers_textually() -> None:
    assert choose_target(cond({"basic_chat": "chat"}, default="d"), {"v": "basic_chat"}) == "chat"
    assert choose_target(cond({"1": "one"}, default="d"), {"v": True}) == "d"


def test_first_ordering_match_wins_and_keys_are_rendered() -> None:
    c = cond({"{max}": "stop", "2": "mid"}, op="gte", default="go")
    assert choose_target(c, {"v": 7, "max": 5}) == "stop"
    assert choose_target(c, {"v": 3, "max": 5}) == "mid"
    assert choose_target(c, {"v": 1, "max": 5}) == "go"


def test_ordering_on_non_numbers_falls_to_default() -> None:
    c = cond({"3": "big"}, op="gt", default="d")
    assert choose_target(c, {"v": "lots"}) == "d"
    assert choose_target(c, {"v": True}) == "d"
    assert choose_target(c, {"v": "4"}) == "big"


def test_legacy_default_case_key_and_end() -> None:
    assert choose_target(cond({"a": "x", "default": "dflt"}), {"v": "b"}) == "dflt"
    assert choose_target(cond({"a": "x"}), {"v": "b"}) is None
    assert choose_target(cond({"a": None}, default="d"), {"v": "a"}) is None


def test_ne_takes_the_first_non_matching_key() -> None:
    assert choose_target(cond({"done": "loop"}, op="ne", default="end"), {"v": "busy"}) == "loop"
    assert choose_target(cond({"done": "loop"}, op="ne", default="end"), {"v": "done"}) == "end"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("true", True),
        ("false", False),
        ("5", 5),
        ("2.5", 2.5),
        ("null", None),
        ("True", "True"),
        ("basic_chat", "basic_chat"),
        (" 5", " 5"),
        ("", ""),
    ],
)
def test_case_key_value(key: str, value: Any) -> None:
    result = case_key_value(key)
    assert result == value and type(result) is type(value)
