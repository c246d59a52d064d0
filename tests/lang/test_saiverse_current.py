"""The origin's current format in the language: `contains`, parameters optional unless they
say `required`, `"action": null` on `exec`, and the names an `exec` node's playbook spells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from sea.engine.calls import bind_args
from sea.errors import CallArgumentError
from sea.lang import exec_targets
from sea.lang.conditions import choose_target
from sea.lang.library import PlaybookLibrary
from sea.lang.loader import check_document
from sea.lang.models import Playbook
from sea.lang.node_models import Node

NODE: TypeAdapter[Any] = TypeAdapter(Node)


def _branch(cases: dict[str, str | None]) -> Any:
    node = NODE.validate_python({
        "id": "b", "type": "pass",
        "conditional_next": {"field": "v", "operator": "contains", "cases": cases,
                             "default": "other"},
    })
    return node.conditional_next


@pytest.mark.parametrize(
    ("value", "target"),
    [
        ("nothing found", "word"),  # a string holding the key's text
        ("found it", "other"),
        (["a", 3, True], "three"),  # a list holding an element equal to the key, JSON-typed
        (["a", "3"], "three"),  # "3" the string is not 3 the number... but the text key "3"
        ({"nothing": 1}, "word"),  # an object with the key as a member
        (5, "other"),  # a number contains nothing
        (None, "other"),
    ],
)
def test_contains_looks_inside_strings_lists_and_objects(value: Any, target: str) -> None:
    cond = _branch({"nothing": "word", "3": "three"})
    assert choose_target(cond, {"v": value}) == target


def test_contains_a_boolean_key_matches_a_boolean_element_only() -> None:
    cond = _branch({"true": "yes"})
    assert choose_target(cond, {"v": [True]}) == "yes"
    assert choose_target(cond, {"v": [1]}) == "other"
    assert choose_target(cond, {"v": "it is true"}) == "yes"  # text in a string


def _doc() -> bytes:
    document = {
        "name": "flags",
        "description": "Branches on a number with contains.",
        "start_node": "ask",
        "nodes": [
            {"id": "ask", "type": "llm", "action": "How many?", "output_key": "answer",
             "response_schema": {"type": "object", "properties": {"count": {"type": "integer"}},
                                 "required": ["count"]},
             "next": "b"},
            {"id": "b", "type": "pass",
             "conditional_next": {"field": "answer.count", "operator": "contains",
                                  "cases": {"1": "end"}, "default": "end"}},
            {"id": "end", "type": "pass"},
        ],
    }
    return json.dumps(document).encode()


def test_contains_on_a_number_is_a_warning_naming_the_operator() -> None:
    result = check_document(_doc())
    assert [(d.code, d.pointer) for d in result.diagnostics] == [
        ("SEA044", "/nodes/1/conditional_next/operator")
    ]
    assert result.errors == []


def _playbook(params: list[dict[str, Any]]) -> Playbook:
    return Playbook.model_validate({
        "name": "callee", "description": "d", "input_schema": params, "start_node": "e",
        "nodes": [{"id": "e", "type": "pass"}],
    })


def test_a_parameter_without_required_is_optional_as_in_saiverse() -> None:
    callee = _playbook([{"name": "depth", "description": "how deep"}])
    assert bind_args(callee, {}) == {"depth": None}


def test_a_parameter_marked_required_must_be_passed() -> None:
    callee = _playbook([{"name": "depth", "description": "how deep", "required": True}])
    with pytest.raises(CallArgumentError, match="required argument 'depth' is missing"):
        bind_args(callee, {})


def test_exec_accepts_a_null_action_only() -> None:
    node = NODE.validate_python({"id": "x", "type": "exec", "action": None})
    assert node.action is None
    with pytest.raises(ValueError, match="action"):
        NODE.validate_python({"id": "x", "type": "exec", "action": "source_web"})


@pytest.mark.parametrize(
    ("template", "fits", "misses"),
    [
        ("source_{route.source}", ["source_web", "source_pdf"], ["web", "source_", "x_source_web"]),
        ("{kind}_search", ["web_search"], ["web_search_x"]),
        ("basic_chat", ["basic_chat"], ["basic_chat2"]),
        ("{choice}", [], ["basic_chat"]),  # wholly chosen at run time: spells nothing
        ("Source {x}", [], ["source_web"]),  # not a playbook name
        ("={a}", [], ["a"]),  # an expression, not a spelling
    ],
)
def test_the_names_a_playbook_spells(template: str, fits: list[str], misses: list[str]) -> None:
    patterns = exec_targets.spelled_patterns([{"selected_playbook": template}], "selected_playbook")
    assert [n for n in fits + misses if exec_targets.allows(patterns, n)] == fits


def test_an_input_template_reading_nothing_defined_is_a_warning(tmp_path: Path) -> None:
    # rendered as SAIVerse did: a reference nothing defines stays as written
    caller = {
        "name": "caller", "description": "d", "start_node": "call",
        "nodes": [{"id": "call", "type": "subplay", "playbook": "other",
                   "input_template": "{bundle} then {input}"}],
    }
    other = {"name": "other", "description": "d", "start_node": "a",
             "nodes": [{"id": "a", "type": "pass"}]}
    for document in (caller, other):
        (tmp_path / f"{document['name']}.json").write_text(json.dumps(document))
    result = PlaybookLibrary([tmp_path]).check("caller")
    assert [(d.code, d.pointer) for d in result.diagnostics] == [
        ("SEA031", "/nodes/0/input_template")
    ]
