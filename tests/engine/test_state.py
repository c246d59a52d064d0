"""Reducers of the typed state: partial updates fold in without touching their inputs."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from sea.engine.state import add_counts, assign, merge_vars, variables

keys = st.sampled_from(["a", "b", "c", "d"])
values = st.one_of(st.integers(), st.text(max_size=3), st.none())
var_maps = st.dictionaries(keys, values, max_size=4)
count_maps = st.dictionaries(keys, st.integers(min_value=0, max_value=9), max_size=4)


@given(var_maps, var_maps)
def test_merge_vars_right_wins_and_inputs_unchanged(
    left: dict[str, object], right: dict[str, object]
) -> None:
    before = copy.deepcopy((left, right))
    merged = merge_vars(left, right)
    assert merged == {**left, **right}
    assert (left, right) == before


@given(count_maps, count_maps, count_maps)
def test_add_counts_is_associative_and_pure(
    a: dict[str, int], b: dict[str, int], c: dict[str, int]
) -> None:
    before = copy.deepcopy((a, b, c))
    assert add_counts(add_counts(a, b), c) == add_counts(a, add_counts(b, c))
    for key in set(a) | set(b):
        assert add_counts(a, b)[key] == a.get(key, 0) + b.get(key, 0)
    assert (a, b, c) == before


def test_assign_routes_last_and_error_to_their_channels() -> None:
    update = assign({"x": 1, "last": "t", "error": None})
    assert update == {"vars": {"x": 1}, "last": "t", "error": None}
    view = variables({"vars": {"x": 1, "last": "shadowed"}, "last": "t"})
    assert (view["x"], view["last"], view["error"]) == (1, "t", None)


def test_a_frame_at_a_node_keeps_every_other_field() -> None:
    import dataclasses

    from sea.engine.pulse import Frame

    values = {f.name: object() for f in dataclasses.fields(Frame)}
    frame = Frame(**values)  # type: ignore[arg-type]
    at = frame.at_node(7)
    assert at.step == 7 and next(at.writes) == 0
    kept = [f.name for f in dataclasses.fields(Frame) if f.name not in ("step", "writes")]
    assert {name: getattr(at, name) for name in kept} == {name: values[name] for name in kept}
