"""Playbooks in the exact SAIVerse format validate without edits, except real mistakes; the
rules SAIVerse's runtime applied implicitly (:mod:`sea.lang.saiverse`) are known to the
checks."""

import json
from pathlib import Path

import pytest

from sea.errors import Severity
from sea.lang import saiverse
from sea.lang.library import PlaybookLibrary
from sea.lang.node_models import ExecNode, LLMNode, SetNode

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


def test_python_boolean_key_matches_with_a_warning() -> None:
    # SAIVerse compared str(value), so "True" matched a boolean there; it matches here too.
    result = PlaybookLibrary([DATA / "saiverse_broken"]).check("x_reply")
    assert [(d.code, d.pointer, d.severity) for d in result.diagnostics] == [
        ("SEA043", "/nodes/1/conditional_next/cases/True", Severity.WARNING)
    ]
    (diagnostic,) = result.diagnostics
    assert diagnostic.hint is not None and 'write the key as "true"' in diagnostic.hint
    assert result.playbook is not None


def test_real_boolean_with_lowercase_keys_is_correct_here() -> None:
    # Always took `default` in SAIVerse (str(True) == "True"); JSON-typed here, so it is fine.
    result = PlaybookLibrary([DATA / "saiverse_broken"]).check("create_building")
    assert result.diagnostics == []


def test_implicit_rules_make_saiverse_form_playbooks_valid() -> None:
    # Each of these read a variable SAIVerse's runtime provided, or passed no `input`.
    ours = PlaybookLibrary([DATA / "saiverse_compat"]).names()
    library = PlaybookLibrary.bundled([DATA / "saiverse_compat"])  # with sub_speak
    found = {
        name: [(d.code, d.pointer, d.severity) for d in library.check(name).diagnostics]
        for name in ours
    }
    assert found == {
        "basic_chat": [],
        "deep_notes": [],
        "meta_research": [("SEA039", "/nodes/1/assignments/found", Severity.WARNING)],
        "meta_user": [],
        "note_down": [],
        "pet_notes": [
            ("SEA043", "/nodes/1/conditional_next/cases/True", Severity.WARNING),
            ("SEA043", "/nodes/1/conditional_next/cases/False", Severity.WARNING),
        ],
        "sub_router_user": [],
        "subagent_report": [],
        "think_aloud": [],
    }


def test_a_variable_only_an_unlisted_callee_returns_names_it() -> None:
    result = PlaybookLibrary.bundled([DATA / "saiverse_compat"]).check("meta_research")
    (diagnostic,) = result.diagnostics
    assert "`deep_notes`" in diagnostic.message and "node `run`" in diagnostic.message
    assert diagnostic.hint is not None and "router_callable" in diagnostic.hint


def test_provided_variables_are_defined_only_where_saiverse_defined_them(
    tmp_path: Path,
) -> None:
    # without available_tools, the llm node sets no tool_called; without the init flag, the
    # set node creates no executed_playbooks; without a subagent, no chronicle
    (tmp_path / "plain.json").write_text(json.dumps({
        "name": "plain",
        "description": "Reads SAIVerse variables nothing provides here.",
        "start_node": "ask",
        "nodes": [
            {"id": "ask", "type": "llm", "action": "Hi", "next": "init"},
            {"id": "init", "type": "set", "assignments": {"executed_playbooks_init": False},
             "next": "keep"},
            {"id": "keep", "type": "set", "assignments": {
                "a": "{tool_called}", "b": "{executed_playbooks}", "c": "{tool_arg_q}",
                "d": "{_subagent_chronicle}", "e": "{metadata}"}},
        ],
    }))
    result = PlaybookLibrary([tmp_path]).check("plain")
    undefined = sorted(d.message.split("`")[3] for d in result.diagnostics)
    assert [d.code for d in result.diagnostics] == ["SEA030"] * 4
    assert undefined == ["_subagent_chronicle", "executed_playbooks", "tool_arg_q", "tool_called"]


def test_the_table_states_each_node_types_variables_with_json_types() -> None:
    names = {t: [(r.name, r.types, r.condition) for r in rules]
             for t, rules in saiverse.NODE_VARIABLES.items()}
    assert ("executed_playbooks", ("array",), saiverse.Condition.EXECUTED_PLAYBOOKS_INIT) in (
        names["set"]
    )
    assert ("tool_called", ("boolean",), saiverse.Condition.AVAILABLE_TOOLS) in names["llm"]
    assert [r.name for r in saiverse.RUN_VARIABLES] == ["metadata", "last"]
    assert [a.sources for a in saiverse.IMPLICIT_ARGUMENTS["exec"]] == [
        ("args.input", "input", "last")
    ]
    assert saiverse.RENAMED_FIELDS["llm"]["tools"] == "available_tools"


def test_node_conditions_select_the_rules() -> None:
    tool_mode = LLMNode(id="a", type="llm", available_tools=["memory_search"])
    plain = LLMNode(id="b", type="llm")
    init = SetNode(id="c", type="set", assignments={"executed_playbooks_init": True})
    subagent = ExecNode(id="d", type="exec", execution="subagent")
    assert "tool_called" in set(saiverse.provided_names(tool_mode))
    assert list(saiverse.provided_names(plain)) == []
    assert list(saiverse.provided_names(init)) == ["executed_playbooks"]
    assert list(saiverse.provided_names(subagent)) == ["_subagent_chronicle"]
    assert [r.effect for r in saiverse.provided_by(subagent)] == [
        saiverse.Effect.APPENDS, saiverse.Effect.DEFINES
    ]
    rule = saiverse.rule_for("tool_arg_query", [tool_mode])
    assert rule is not None and rule.prefix and rule.name == "tool_arg_"
    assert saiverse.rule_for("tool_arg_query", [plain]) is None


def test_runtime_values_are_saiverses() -> None:
    called = saiverse.tool_mode_values("memory_search", {"query": "cat"}, "")
    assert called == {
        "tool_called": True, "has_speak_content": False, "speak_content": "",
        "tool_name": "memory_search", "tool_args": {"query": "cat"}, "tool_arg_query": "cat",
    }
    text = saiverse.tool_mode_values(None, None, "Hello")
    assert text["tool_called"] is False and text["has_speak_content"] is True
    assert text["tool_name"] is None and text["tool_args"] is None
    (rule,) = saiverse.implicit_arguments("subplay")
    assert saiverse.implicit_argument(rule, {"input": "x"}, {"input": "y"}) == "x"
    assert saiverse.implicit_argument(rule, {}, {"input": "", "last": "z"}) == "z"
    assert saiverse.implicit_argument(rule, {}, {"input": "", "last": None}) is None
    assert saiverse.set_node_values({"executed_playbooks_init": True}) == {
        "executed_playbooks": []
    }
    assert saiverse.set_node_values({"executed_playbooks_init": True,
                                     "executed_playbooks": ["a"]}) == {}
    assert saiverse.appended_after_call({"executed_playbooks": ["a"]}, "b") == {
        "executed_playbooks": ["a", "b"]
    }
    assert saiverse.appended_after_call({}, "b") == {}
    assert [saiverse.lowercase_case_key(k) for k in ("True", "False", "true", "x")] == [
        "true", "false", "true", "x"
    ]


def test_a_required_metadata_parameter_is_satisfied_by_passing_it(tmp_path: Path) -> None:
    # SAIVerse's runtime never enforced `required`: a parameter is optional unless it says
    # `"required": true`. Its meta playbooks pass "metadata": "{metadata}" to a speaker.
    speaker = {"name": "speaker", "description": "Speaks.", "start_node": "say",
               "input_schema": [{"name": "input", "description": "text"},
                                {"name": "metadata", "description": "attachments",
                                 "required": True}],
               "nodes": [{"id": "say", "type": "llm", "action": None, "speak": True}]}
    calls = {"passes": {"input": "{input}", "metadata": "{metadata}"},
             "forgets": {"metadata": "{metadata}"},
             "forgets_required": {"input": "{input}"}}
    for name, args in calls.items():
        (tmp_path / f"{name}.json").write_text(json.dumps({
            "name": name, "description": "Calls the speaker.", "start_node": "speak",
            "nodes": [{"id": "speak", "type": "subplay", "playbook": "speaker", "args": args}],
        }))
    (tmp_path / "speaker.json").write_text(json.dumps(speaker))
    library = PlaybookLibrary([tmp_path])
    assert library.check("passes").diagnostics == []
    assert library.check("forgets").diagnostics == []  # `input` has no `required`: optional
    (missing,) = library.check("forgets_required").diagnostics
    assert (missing.code, missing.severity) == ("SEA052", Severity.ERROR)
    assert "`metadata`" in missing.message
