"""The data-file cases: every invalid case gives exactly its expected diagnostics."""

from pathlib import Path

import orjson
import pytest

from sea.errors import Severity
from sea.lang.checks import CheckContext
from sea.lang.loader import check_document

DATA = Path(__file__).resolve().parent.parent / "data"
EXPECTED: dict[str, list[list[str]]] = {
    k: v for k, v in orjson.loads((DATA / "expected.json").read_bytes()).items() if k[0] != "_"
}


def test_every_invalid_file_has_an_expectation() -> None:
    files = {f"invalid/{p.name}" for p in (DATA / "invalid").glob("*.json")}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_invalid_case_gives_exactly_the_expected_diagnostics(
    case: str, context: CheckContext
) -> None:
    path = DATA / case
    result = check_document(path.read_bytes(), file=str(path), context=context)
    found = sorted([d.code, d.pointer] for d in result.diagnostics)
    assert found == sorted(EXPECTED[case])
    for diagnostic in result.diagnostics:
        assert diagnostic.file == str(path)
        assert diagnostic.line is not None and diagnostic.column is not None
        assert diagnostic.message
    if any(d.severity is Severity.ERROR for d in result.diagnostics):
        assert result.playbook is None
    else:
        assert result.playbook is not None


@pytest.mark.parametrize("path", sorted((DATA / "valid").glob("*.json")), ids=lambda p: p.name)
def test_valid_case_has_no_diagnostics(path: Path, context: CheckContext) -> None:
    result = check_document(path.read_bytes(), file=str(path), context=context)
    assert [d.format_human() for d in result.diagnostics] == []
    assert result.playbook is not None


def test_library_playbooks_are_valid_against_each_other(context: CheckContext) -> None:
    assert context.library is not None
    for name in context.library.names():
        path = DATA / "library" / f"{name}.json"
        result = check_document(path.read_bytes(), file=str(path), context=context)
        assert [d.format_human() for d in result.diagnostics] == []


def _char_at(path: Path, line: int, column: int) -> str:
    return path.read_text(encoding="utf-8").split("\n")[line - 1][column - 1]


@pytest.mark.parametrize(
    ("case", "char"),
    [
        ("invalid/expression_syntax.json", "*"),
        ("invalid/undefined_variable.json", "{"),
        ("invalid/typo_required_field.json", '"'),
        ("invalid/invalid_json.json", '"'),
        ("invalid/response_schema_int.json", '"'),
    ],
)
def test_line_and_column_point_at_the_mistake(case: str, char: str, context: CheckContext) -> None:
    path = DATA / case
    (diagnostic,) = check_document(path.read_bytes(), context=context).diagnostics
    assert diagnostic.line is not None and diagnostic.column is not None
    assert _char_at(path, diagnostic.line, diagnostic.column) == char


def test_unknown_field_points_at_the_key(context: CheckContext) -> None:
    path = DATA / "invalid/typo_required_field.json"
    (diagnostic,) = check_document(path.read_bytes(), context=context).diagnostics
    line = path.read_text().split("\n")[diagnostic.line - 1]  # type: ignore[operator]
    assert line[diagnostic.column - 1 :].startswith('"acton"')  # type: ignore[operator]
