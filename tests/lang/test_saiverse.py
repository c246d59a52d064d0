"""Playbooks in the exact SAIVerse format validate without edits, except real mistakes."""

from pathlib import Path

import pytest

from sea.errors import Severity
from sea.lang.library import PlaybookLibrary

DATA = Path(__file__).resolve().parent.parent / "data"


def test_saiverse_format_playbooks_validate_without_errors() -> None:
    library = PlaybookLibrary([DATA / "saiverse"])
    assert library.names() == [
        "basic_chat",
        "memory_research",
        "meta_user",
        "sub_router_user",
        "sub_speak",
        "wait",
    ]
    for name in library.names():
        result = library.check(name)
        assert result.errors == [], [d.format_human() for d in result.errors]
        assert result.playbook is not None


def test_router_output_that_nothing_defines_is_a_warning() -> None:
    # SAIVerse's sub_router_user exports `selected_args`, which no node ever sets.
    result = PlaybookLibrary([DATA / "saiverse"]).check("sub_router_user")
    assert [(d.code, d.pointer, d.severity) for d in result.diagnostics] == [
        ("SEA034", "/output_schema/1", Severity.WARNING)
    ]


@pytest.mark.parametrize(
    ("name", "code", "pointer", "hint_part"),
    [
        ("sub_execute_phase", "SEA011", "/nodes/0/tools", "available_tools"),
        (
            "send_email_to_user",
            "SEA019",
            "/nodes/0/response_schema/properties/priority/type",
            '"integer"',
        ),
        ("x_reply", "SEA040", "/nodes/1/conditional_next/cases/True", '"true"'),
    ],
)
def test_known_upstream_mistakes_are_named_with_the_fix(
    name: str, code: str, pointer: str, hint_part: str
) -> None:
    result = PlaybookLibrary([DATA / "saiverse_broken"]).check(name)
    assert [(d.code, d.pointer) for d in result.diagnostics] == [(code, pointer)]
    (diagnostic,) = result.diagnostics
    assert diagnostic.hint is not None and hint_part in diagnostic.hint
    assert result.playbook is None


def test_real_boolean_with_lowercase_keys_is_correct_here() -> None:
    # Always took `default` in SAIVerse (str(True) == "True"); JSON-typed here, so it is fine.
    result = PlaybookLibrary([DATA / "saiverse_broken"]).check("create_building")
    assert result.diagnostics == []
