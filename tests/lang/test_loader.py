"""The loader: one diagnostic per mistake, all problems at once, never an exception."""

from pathlib import Path
from typing import Any

import orjson
import pytest

from sea.errors import PlaybookError, Severity
from sea.lang.checks import CheckContext
from sea.lang.loader import check_document, load_playbook_file


def doc(*nodes: dict[str, Any], **top: Any) -> bytes:
    body = {"name": "t", "description": "test", "start_node": nodes[0]["id"], "nodes": list(nodes)}
    body.update(top)
    return orjson.dumps(body, option=orjson.OPT_INDENT_2)


def codes_of(data: bytes, context: CheckContext | None = None) -> list[tuple[str, str]]:
    return [(d.code, d.pointer) for d in check_document(data, context=context).diagnostics]


def test_one_typo_in_a_node_is_one_diagnostic() -> None:
    data = doc({"id": "a", "type": "memorize", "acton": "{input}", "rol": "user"})
    assert codes_of(data) == [("SEA011", "/nodes/0/acton"), ("SEA011", "/nodes/0/rol")]


def test_problems_in_several_nodes_and_graph_are_all_reported() -> None:
    data = doc(
        {"id": "a", "type": "llm", "action": "x", "model": "gpt", "next": "b"},
        {"id": "b", "type": "set", "assignments": {"n": "=1 +"}, "next": "zz"},
    )
    assert sorted(codes_of(data)) == [
        ("SEA011", "/nodes/0/model"),
        ("SEA022", "/nodes/1/next"),
        ("SEA032", "/nodes/1/assignments/n"),
    ]


def test_errors_come_before_warnings() -> None:
    data = doc(
        {"id": "a", "type": "llm", "action": "{maybe_literal}", "next": "b"},
        {"id": "b", "type": "speak", "action": "{undefined_here}"},
    )
    severities = [d.severity for d in check_document(data).diagnostics]
    assert severities == [Severity.ERROR, Severity.WARNING]


def test_uncertain_callee_outputs_are_warnings_without_a_library() -> None:
    data = doc(
        {"id": "a", "type": "subplay", "playbook": "helper", "next": "b"},
        {"id": "b", "type": "speak", "action": "{helper_result}"},
    )
    result = check_document(data)
    assert [(d.code, d.severity) for d in result.diagnostics] == [("SEA033", Severity.WARNING)]
    assert result.playbook is not None


def test_exec_outputs_come_from_router_callable_playbooks(context: CheckContext) -> None:
    data = doc(
        {"id": "a", "type": "exec", "next": "b"},
        {"id": "b", "type": "speak", "action": "{summary} {found}"},
        input_schema=[{"name": "selected_playbook", "description": "chosen"}],
    )
    assert codes_of(data, context) == []


def test_error_variable_is_defined_after_error_next() -> None:
    data = doc(
        {"id": "a", "type": "tool", "action": "t", "error_next": "b"},
        {"id": "b", "type": "speak", "action": "{error.message}"},
    )
    assert codes_of(data) == []


def test_loop_with_error_exit_only_is_unbounded() -> None:
    data = doc(
        {"id": "a", "type": "tool", "action": "t", "next": "b", "error_next": "c"},
        {"id": "b", "type": "pass", "next": "a"},
        {"id": "c", "type": "pass"},
    )
    assert codes_of(data) == [("SEA026", "/nodes/0")]


def test_memorize_true_and_legacy_fields_are_accepted() -> None:
    data = doc(
        {"id": "a", "type": "llm", "action": "hi", "memorize": True, "important": True},
        context_requirements={"history_depth": "10messages"},
        required_credentials=["x"],
        dev_only=True,
    )
    assert codes_of(data) == []


def test_non_string_type_and_non_object_node() -> None:
    data = doc({"id": "a", "type": "pass", "next": "b"}, {"id": "b", "type": 3}, "oops")  # type: ignore[arg-type]
    assert sorted(codes_of(data)) == [("SEA012", "/nodes/1/type"), ("SEA012", "/nodes/2")]


def test_load_playbook_file_raises_with_all_diagnostics(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(doc({"id": "a", "type": "pass", "next": "x"}, {"id": "a", "type": "pass"}))
    with pytest.raises(PlaybookError) as info:
        load_playbook_file(path)
    assert sorted(d.code for d in info.value.diagnostics) == ["SEA020", "SEA022"]
    assert all(d.file == str(path) for d in info.value.diagnostics)
    with pytest.raises(PlaybookError) as missing:
        load_playbook_file(tmp_path / "absent.json")
    assert missing.value.code == "SEA001"


def test_text_input_is_accepted() -> None:
    text = doc({"id": "a", "type": "pass"}).decode()
    result = check_document(text)
    assert result.playbook is not None and result.diagnostics == []


def test_absurdly_deep_documents_are_a_diagnostic() -> None:
    deep = "[" * 900 + "]" * 900
    data = doc({"id": "a", "type": "set", "assignments": {"x": "PLACEHOLDER"}}).replace(
        b'"PLACEHOLDER"', deep.encode()
    )
    (diagnostic,) = check_document(data).diagnostics
    assert diagnostic.code == "SEA005"
    assert diagnostic.pointer.startswith("/nodes/0/assignments/x/0/0")
    assert diagnostic.line is not None


def test_a_utf8_byte_order_mark_is_accepted() -> None:
    result = check_document(b"\xef\xbb\xbf" + doc({"id": "a", "type": "pass", "bogus": 1}))
    ((code, pointer, line),) = [(d.code, d.pointer, d.line) for d in result.diagnostics]
    assert (code, pointer) == ("SEA011", "/nodes/0/bogus")
    assert line == 9


def test_every_mistake_inside_a_nested_object_is_reported() -> None:
    cond = {"field": "input", "operator": "equals", "cases": {"x": None}, "defualt": "a"}
    data = doc({"id": "a", "type": "pass", "conditional_next": cond})
    assert sorted(codes_of(data)) == [
        ("SEA011", "/nodes/0/conditional_next/defualt"),
        ("SEA016", "/nodes/0/conditional_next/operator"),
    ]


def test_findings_after_a_dropped_node_point_at_the_right_node() -> None:
    data = doc({"id": "a", "type": "pass", "next": "zz"})
    data = data.replace(b'"nodes": [', b'"nodes": [\n    "oops",')
    result = check_document(data)
    assert sorted((d.code, d.pointer) for d in result.diagnostics) == [
        ("SEA012", "/nodes/0"),
        ("SEA022", "/nodes/1/next"),
    ]
    (unknown_next,) = [d for d in result.diagnostics if d.code == "SEA022"]
    lines = data.decode().split("\n")
    assert unknown_next.line == lines.index('      "next": "zz"') + 1


def test_a_misspelt_output_key_does_not_also_report_its_readers() -> None:
    data = doc(
        {"id": "a", "type": "llm", "action": "hi", "outptu_key": "r", "next": "b"},
        {"id": "b", "type": "speak", "action": "{r}"},
    )
    assert codes_of(data) == [("SEA011", "/nodes/0/outptu_key")]


def test_a_model_rule_beyond_the_schema_reads_like_the_other_diagnostics() -> None:
    param = {"name": "n", "description": "", "type": "integer", "param_type": "string"}
    data = doc({"id": "a", "type": "pass"}, input_schema=[param])
    (diagnostic,) = check_document(data).diagnostics
    assert (diagnostic.code, diagnostic.pointer) == ("SEA009", "/input_schema/0")
    assert diagnostic.message.startswith("`type` (integer) and its legacy spelling `param_type`")


def test_a_utf16_file_is_named_as_such() -> None:
    (diagnostic,) = check_document(
        doc({"id": "a", "type": "pass"}).decode().encode("utf-16")
    ).diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == ("SEA002", 1, 1)
    assert diagnostic.hint is not None and "UTF-16" in diagnostic.hint
