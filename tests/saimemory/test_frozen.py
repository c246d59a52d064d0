"""``fast_init``: a frozen dataclass built through its slots keeps every rule of the one the
dataclass decorator writes."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from saimemory.frozen import fast_init
from saimemory.records import Message


@dataclass(frozen=True, slots=True)
class _Plain:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)


@fast_init
@dataclass(frozen=True, slots=True)
class _Fast:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)


def test_the_constructor_takes_the_same_arguments_with_the_same_defaults() -> None:
    reference = inspect.signature(_Plain.__init__).parameters
    shown = inspect.signature(_Fast.__init__).parameters
    assert list(shown) == list(reference)
    assert [p.default for p in shown.values()][:3] == [inspect.Parameter.empty,
                                                      inspect.Parameter.empty, "b"]
    fast = _Fast
    one, two = fast(1), fast(1)
    assert (one.a, one.b, one.c) == (1, "b", [])
    assert one.c is not two.c  # a fresh value per call
    assert fast(2, "x", [3]) == fast(a=2, b="x", c=[3])
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.a = 5  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing"):
        fast()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword"):
        fast(1, d=2)  # type: ignore[call-arg]


def test_a_message_is_built_through_its_slots_and_stays_frozen() -> None:
    fields = [f.name for f in dataclasses.fields(Message)]
    assert list(inspect.signature(Message.__init__).parameters)[1:] == fields
    made = Message(1, "p", "t", "user", "hi", datetime(2026, 1, 1, tzinfo=UTC), None, "",
                   ("conversation",), {}, "uid-1")
    assert (made.playbook, made.node) == (None, None)
    assert dataclasses.replace(made, node="n").node == "n"
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.content = "changed"  # type: ignore[misc]


def test_classes_it_cannot_serve_are_refused() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(frozen=True, slots=True)
    class After:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True, kw_only=True)
    class KeywordOnly:
        a: int

    for cls in (NoSlots, After, KeywordOnly):
        with pytest.raises(TypeError):
            fast_init(cls)
