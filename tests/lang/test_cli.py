"""`sea validate` and `sea graph`: output formats, exit codes, never a traceback."""

import json
from pathlib import Path

import pytest

from sea.cli import main

DATA = Path(__file__).resolve().parent.parent / "data"


def test_validate_valid_directories_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", str(DATA / "library"), str(DATA / "valid")])
    out, err = capsys.readouterr()
    assert code == 0
    assert out == ""
    assert "6 files checked: 0 errors, 0 warnings" in err


def test_validate_reports_like_a_compiler(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "invalid" / "unknown_field_tools.json"
    code = main(["validate", str(path)])
    out, _ = capsys.readouterr()
    assert code == 1
    first, hint = out.splitlines()[:2]
    assert first.startswith(f"{path}:6:54: SEA011 error: unknown field `tools`")
    assert hint.strip().startswith("hint: did you mean `available_tools`?")


def test_validate_json_format(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "invalid" / "case_not_in_enum.json"
    code = main(["validate", "--json", str(path)])
    out, _ = capsys.readouterr()
    assert code == 1
    (entry,) = json.loads(out)
    assert set(entry) == {
        "file",
        "code",
        "severity",
        "pointer",
        "line",
        "column",
        "message",
        "hint",
    }
    assert entry["code"] == "SEA040"
    assert entry["pointer"] == "/nodes/1/conditional_next/cases/memroy"
    assert entry["severity"] == "error"
    assert entry["file"] == str(path)


def test_warnings_fail_only_with_strict(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(DATA / "invalid" / "prompt_undefined.json")
    assert main(["validate", path]) == 0
    assert main(["validate", "--strict", path]) == 1
    assert "SEA031 warning" in capsys.readouterr().out


def test_tools_catalogue_makes_unknown_tools_errors(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(DATA / "invalid" / "unknown_tool.json")
    assert main(["validate", path]) == 0
    assert main(["validate", "--tools", str(DATA / "tools.json"), path]) == 1
    assert "SEA060 error: tool `web_serch`" in capsys.readouterr().out


def test_bad_tool_catalogue_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text("[1, 2]")
    assert main(["validate", "--tools", str(bad), str(DATA / "valid")]) == 2
    assert "tool catalogue" in capsys.readouterr().err


def test_catalogue_argument_schema_with_an_unknown_type_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text('{"web_search": {"properties": {"query": {"type": "int"}}}}')
    path = str(DATA / "valid" / "templates_and_tools.json")
    assert main(["validate", "--tools", str(bad), path]) == 2
    err = capsys.readouterr().err
    assert "SEA300" in err and "`web_search`" in err and "/properties/query/type" in err


def test_bad_files_are_diagnostics_not_tracebacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "latin1.json").write_bytes(b'{"name": "caf\xe9"}')
    (tmp_path / "number.json").write_text("42")
    (tmp_path / "syntax.json").write_text('{"name": "x",\n  "nodes": [}')
    code = main(["validate", "--json", str(tmp_path), str(tmp_path / "absent.json")])
    out, _ = capsys.readouterr()
    assert code == 2  # a named file that does not exist: reported, and the exit of a usage error
    found = {(Path(d["file"]).name, d["code"], d["line"], d["column"]) for d in json.loads(out)}
    assert found == {
        ("absent.json", "SEA001", None, None),
        ("latin1.json", "SEA002", 1, 14),
        ("number.json", "SEA004", 1, 1),
        ("syntax.json", "SEA003", 2, 13),
    }


def test_empty_directory_exits_zero_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(tmp_path)]) == 0
    assert "no playbooks" in capsys.readouterr().err


def test_duplicate_playbook_names_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (DATA / "library" / "summarize.json").read_text()
    (tmp_path / "a.json").write_text(text)
    (tmp_path / "b.json").write_text(text)
    assert main(["validate", str(tmp_path)]) == 0
    assert "SEA080 warning" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("source", "golden"),
    [
        ("valid/router_exec.json", "graph/router_exec.mmd"),
        ("saiverse/memory_research.json", "graph/memory_research.mmd"),
    ],
)
def test_graph_matches_golden_mermaid(
    source: str, golden: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["graph", str(DATA / source)]) == 0
    out = capsys.readouterr().out
    assert out == (DATA / golden).read_text()
    assert out.startswith("flowchart TD\n")
    assert "-. error .->" in out or "error_next" not in (DATA / source).read_text()


def test_graph_by_name_uses_the_given_directories(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", "--playbooks", str(DATA / "saiverse"), "memory_research"]) == 0
    assert capsys.readouterr().out == (DATA / "graph/memory_research.mmd").read_text()


def test_graph_unknown_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", "no_such_playbook_here"]) == 2
    assert "no_such_playbook_here" in capsys.readouterr().err


def test_graph_of_an_invalid_file_prints_diagnostics(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(DATA / "invalid" / "stelis.json")]) == 1
    assert "SEA014" in capsys.readouterr().err


def test_a_misspelt_file_name_suggests_the_file_beside_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["validate", str(DATA / "valid" / "bounded_lop.json")]) == 2  # does not exist
    out = capsys.readouterr().out
    assert "SEA001 error: the file does not exist" in out
    assert "hint: did you mean `bounded_loop.json`?" in out


def test_builtin_tools_are_checked_with_their_own_argument_schemas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    playbook = {
        "name": "recall",
        "description": "search memory",
        "start_node": "search",
        "nodes": [
            {"id": "search", "type": "tool", "action": "memory_search",
             "args": {"query": "{input}", "limit": 5, "colour": "blue"}},
        ],
    }
    path = tmp_path / "recall.json"
    path.write_text(json.dumps(playbook))
    catalogue = tmp_path / "tools.json"
    catalogue.write_text("{}")
    assert main(["validate", str(path)]) == 0
    assert main(["validate", "--tools", str(catalogue), str(path)]) == 1
    out = capsys.readouterr().out
    assert "colour" in out and "memory_search" in out


def test_strict_knows_the_builtin_tools_and_rejects_any_other(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(DATA / "invalid" / "unknown_tool.json")
    assert main(["validate", path]) == 0  # tools unchecked: the host may provide it
    assert main(["validate", "--strict", path]) == 1
    assert "SEA060 error: tool `web_serch`" in capsys.readouterr().out
    bundled = str(Path(__file__).resolve().parents[2] / "playbooks")
    assert main(["validate", "--strict", bundled]) == 0  # they call built-in tools only
