"""Expressions: CEL with SAIVerse `{ref}` variables, never text pasting, never a silent 0."""

from typing import Any

import pytest

from sea.lang.expressions import ExpressionError, ExpressionSyntaxError, compile_expression


@pytest.mark.parametrize(
    ("source", "state", "expected"),
    [
        ("{loop_count} + 1", {"loop_count": 0}, 1),
        ("{plan.total_phases} - 1", {"plan": {"total_phases": 3}}, 2),
        ("count * 2", {"count": 4}, 8),
        ("{score} * 2", {"score": 0.75}, 1.5),
        ("{a} + {b}", {"a": 1, "b": 2.5}, 3.5),
        ("{name} + '!'", {"name": "ok"}, "ok!"),
        ("len({items}) > 1 && {flag}", {"items": [1, 2], "flag": True}, True),
        ("size({text})", {"text": "abc"}, 3),
        ("max({a}, {b})", {"a": 3, "b": 9}, 9),
        ("{items}[1]", {"items": [10, 20]}, 20),
        ("{items.length}", {"items": [10, 20]}, 2),
        ("'{x}' + 'y'", {}, "{x}y"),
    ],
)
def test_expressions_evaluate(source: str, state: dict[str, Any], expected: Any) -> None:
    result = compile_expression(source).evaluate(state)
    assert result == expected
    assert type(result) is type(expected)


def test_integers_stay_integers() -> None:
    result = compile_expression("{n} + 1").evaluate({"n": 41})
    assert result == 42 and isinstance(result, int)


def test_variables_lists_roots_of_references_and_identifiers() -> None:
    expr = compile_expression("{plan.total} + count + [1].map(i, i)[0]")
    assert expr.variables == frozenset({"plan", "count"})


def test_user_text_cannot_change_the_expression() -> None:
    expr = compile_expression("{text} + ''")
    hostile = "' + string(1/0) + '"
    assert expr.evaluate({"text": hostile}) == hostile


def test_missing_variable_is_an_error_not_zero() -> None:
    with pytest.raises(ExpressionError) as info:
        compile_expression("{loop_count} + 1").evaluate({})
    assert "loop_count" in str(info.value)


def test_type_mismatch_is_an_error_naming_the_types() -> None:
    with pytest.raises(ExpressionError) as info:
        compile_expression("{n} + 1").evaluate({"n": "three"})
    assert "n: string" in str(info.value)


def test_division_by_zero_is_an_error() -> None:
    with pytest.raises(ExpressionError):
        compile_expression("{n} / 0").evaluate({"n": 1})


def test_non_json_values_are_refused() -> None:
    with pytest.raises(ExpressionError, match="object"):
        compile_expression("{x}").evaluate({"x": object()})


def test_huge_integers_are_refused() -> None:
    with pytest.raises(ExpressionError, match="64-bit"):
        compile_expression("{x}").evaluate({"x": 2**70})


@pytest.mark.parametrize(
    ("source", "offset"),
    [("1 +", 3), ("{loop_count} + * 2", 15), ("", 0), ("'open", 0)],
)
def test_syntax_errors_carry_the_offset_in_the_original(source: str, offset: int) -> None:
    with pytest.raises(ExpressionSyntaxError) as info:
        compile_expression(source)
    assert info.value.offset == offset
    assert info.value.code.startswith("SEA0")


def test_objects_an_expression_returns_have_their_keys_sorted() -> None:
    keys = ["role", "content", "created_at", "zeta", "alpha", "mid"]
    items = [{key: f"{key}{i}" for key in keys} for i in range(5)]
    result = compile_expression("{a} + {b}").evaluate({"a": items[:2], "b": items[2:]})
    assert result == items
    assert all(list(item) == sorted(keys) for item in result)
    nested = compile_expression("{m}").evaluate({"m": {"z": {"y": 1, "b": 2}, "a": 0}})
    assert list(nested) == ["a", "z"] and list(nested["z"]) == ["b", "y"]
