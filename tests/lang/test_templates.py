"""Templates: typed whole references, JSON text rendering, escapes, untouched braces."""

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sea.lang.templates import (
    MISSING,
    REFERENCE_PATTERN,
    TemplateError,
    _split,
    references,
    render,
    render_value,
    resolve_path,
    to_text,
    value_references,
)

STATE: dict[str, Any] = {
    "input": "hello",
    "plan": {"steps": [{"title": "one"}, {"title": "two"}], "total": 2, "done": False},
    "items": [1, 2, 3],
    "count": 5,
    "nothing": None,
    "score": 0.5,
    "length_dict": {"length": "real key"},
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("input", "hello"),
        ("plan.steps.1.title", "two"),
        ("plan.total", 2),
        ("items.length", 3),
        ("input.length", 5),
        ("plan.length", 3),
        ("length_dict.length", "real key"),
        ("nothing", None),
    ],
)
def test_resolve_path_walks_dicts_lists_and_length(path: str, expected: Any) -> None:
    assert resolve_path(STATE, path) == expected


@pytest.mark.parametrize(
    "path", ["absent", "plan.absent", "items.3", "items.x", "count.x", "nothing.a"]
)
def test_resolve_path_returns_missing_for_absent_paths(path: str) -> None:
    assert resolve_path(STATE, path) is MISSING


def test_whole_reference_keeps_the_value_type() -> None:
    assert render("{plan}", STATE) == STATE["plan"]
    assert render("{count}", STATE) == 5
    assert render("{nothing}", STATE) is None
    assert render("{plan.done}", STATE) is False


def test_mixed_text_renders_json_not_python_repr() -> None:
    text = render("plan={plan.steps.0} done={plan.done} n={nothing} x={score}", STATE)
    assert text == 'plan={"title":"one"} done=false n= x=0.5'


def test_escaped_braces_render_as_single_braces() -> None:
    assert render("{{input}} is {input}", STATE) == "{input} is hello"


def test_braces_that_are_not_references_stay() -> None:
    prompt = 'Answer as {"a": {"b": 1}} or { input } for {input}'
    assert render(prompt, STATE) == 'Answer as {"a": {"b": 1}} or { input } for hello'


def test_missing_reference_raises_naming_the_variable() -> None:
    with pytest.raises(TemplateError) as info:
        render("hi {who.name}", STATE)
    assert "who.name" in str(info.value)
    assert info.value.code.startswith("SEA5")


def test_missing_keep_leaves_reference_verbatim() -> None:
    assert render("hi {who} and {input}", STATE, missing="keep") == "hi {who} and hello"
    assert render("{who}", STATE, missing="keep") == "{who}"


def test_state_text_is_not_rendered_again() -> None:
    state = {"a": "{b}", "b": "secret"}
    assert render("x {a}", state) == "x {b}"


def test_references_lists_paths_roots_and_offsets() -> None:
    refs = references("a {x.y.0} {{z}} {w}")
    assert [(r.path, r.root, r.start, r.end) for r in refs] == [
        ("x.y.0", "x", 2, 9),
        ("w", "w", 16, 19),
    ]


def test_render_value_templates_nested_strings_only() -> None:
    value = {"q": "{input}", "n": ["{count}", 3, {"deep": "t {count}"}], "flag": True}
    assert render_value(value, STATE) == {
        "q": "hello",
        "n": [5, 3, {"deep": "t 5"}],
        "flag": True,
    }
    assert [r.path for r in value_references(value)] == ["input", "count", "count"]


def test_a_number_beyond_64_bits_inside_a_structure_renders_as_json() -> None:
    big = 2**70
    assert render("ids: {ids}", {"ids": [big, {"n": -big}]}) == (
        f'ids: [{big},{{"n":{-big}}}]'
    )
    assert to_text({1: "one"}) == '{"1":"one"}'


def test_json_text_writes_what_orjson_cannot() -> None:
    from datetime import date

    from sea.jsontypes import json_text

    big = {"n": 2**64, "d": date(2026, 1, 2)}
    assert json_text(big) == '{"n":18446744073709551616,"d":"2026-01-02"}'
    assert json_text({"ok": [1, "é"]}) == '{"ok":[1,"é"]}'


def _read_char_by_char(template: str) -> list[tuple[str, str, int, int]]:
    """A template read one character at a time, as the split was first written: the
    reference the split must agree with."""
    parts: list[tuple[str, str, int, int]] = []
    escaped_open = text_start = i = 0
    buffer: list[str] = []
    while i < len(template):
        if template.startswith("{{", i):
            buffer.append("{")
            escaped_open, i = escaped_open + 1, i + 2
        elif escaped_open and template.startswith("}}", i):
            buffer.append("}")
            escaped_open, i = escaped_open - 1, i + 2
        elif template[i] == "{" and (match := REFERENCE_PATTERN.match(template, i)):
            if buffer:
                parts.append(("text", "".join(buffer), text_start, i))
                buffer = []
            parts.append(("ref", match.group(1), i, match.end()))
            i = text_start = match.end()
        else:
            buffer.append(template[i])
            i += 1
    if buffer:
        parts.append(("text", "".join(buffer), text_start, len(template)))
    return parts


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["{", "}", "{{", "}}", "a", "b.c", "1", ".", " ", "é", "\n"]),
                max_size=30).map("".join))
def test_a_template_splits_as_read_char_by_char(template: str) -> None:
    assert list(_split(template)) == _read_char_by_char(template)
