"""Events are frozen dataclasses; their faster constructor keeps every dataclass rule."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from sea.engine import events
from sea.engine.events import Event, Spoken, ToolCalled, WarningRaised


def _event_classes() -> list[type[Event]]:
    return [v for v in vars(events).values() if isinstance(v, type) and issubclass(v, Event)]


def _dataclass_init_signature(cls: type[Event]) -> list[tuple[str, Any]]:
    """The parameters (name, default) the dataclass decorator gives ``cls``'s constructor."""
    out: list[tuple[str, Any]] = []
    for spec in dataclasses.fields(cls):
        if spec.default is not dataclasses.MISSING:
            out.append((spec.name, spec.default))
        elif spec.default_factory is not dataclasses.MISSING:
            out.append((spec.name, "factory"))
        else:
            out.append((spec.name, inspect.Parameter.empty))
    return out


@pytest.mark.parametrize("cls", _event_classes(), ids=lambda c: c.__name__)
def test_every_event_takes_its_fields_in_order_with_their_defaults(cls: type[Event]) -> None:
    shown = inspect.signature(cls.__init__).parameters
    names = [name for name in shown if name != "self"]
    expected = _dataclass_init_signature(cls)
    assert names == [name for name, _ in expected]
    for name, default in expected:
        if default != "factory":
            assert shown[name].default == default, name
    values = {name: f"v-{name}" for name, default in expected}
    made = cls(**values)
    assert {f.name: getattr(made, f.name) for f in dataclasses.fields(cls)} == values
    assert made == cls(**values)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, expected[0][0], "changed")


def test_defaults_apply_and_factories_make_a_fresh_value_per_event() -> None:
    one = Spoken("p", "pb", "n", "hello", "stored")
    two = Spoken("p", "pb", "n", "hello", "stored")
    assert one.metadata == {} and two.metadata == {}
    assert one.metadata is not two.metadata
    given = {"k": 1}
    assert Spoken("p", "pb", "n", "hello", "stored", given).metadata is given
    warning = WarningRaised("p", "code", "message")
    assert (warning.playbook, warning.node) == (None, None)
    assert dataclasses.replace(warning, node="n").node == "n"


def test_a_missing_or_unknown_argument_is_refused_like_a_dataclass_refuses_it() -> None:
    with pytest.raises(TypeError, match="missing"):
        ToolCalled("p", "pb", "n", "t", {})  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword"):
        ToolCalled("p", "pb", "n", "t", {}, True, nope=1)  # type: ignore[call-arg]
    called = ToolCalled("p", "pb", "n", "t", {"a": 1}, True, duration_s=0.5, action_id="a1")
    assert called.to_json()["action_id"] == "a1"
    assert called.to_json()["kind"] == "tool_call"
