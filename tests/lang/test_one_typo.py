"""One misspelt field name gives exactly one diagnostic, for every field of every node of
every bundled and test playbook (no cascade of undefined variables or unreachable nodes)."""

from pathlib import Path
from typing import Any

import orjson
import pytest

from sea.errors import Severity
from sea.lang.checks import CheckContext
from sea.lang.library import PlaybookLibrary
from sea.lang.loader import check_document
from sea.lang.models import Playbook
from sea.lang.vocabulary import BUILTIN_NODE_TYPES
from sea.resources import bundled_playbooks_dir

DATA = Path(__file__).resolve().parent.parent / "data"
LIBRARIES = {
    DATA / "valid": [DATA / "valid", DATA / "library"],
    DATA / "library": [DATA / "library"],
    DATA / "saiverse": [DATA / "saiverse"],
    bundled_playbooks_dir(): [bundled_playbooks_dir()],
}
TOP_FIELDS = {f.alias or name for name, f in Playbook.model_fields.items()}


def _typo(name: str, taken: set[str]) -> str:
    """The name with one letter dropped (or doubled), never another valid field name."""
    for candidate in (name[:-1], name[1:], name + name[-1]):
        if candidate and candidate not in taken:
            return candidate
    raise AssertionError(name)


def _cases() -> list[Any]:
    cases = []
    for directory in LIBRARIES:
        for path in sorted(directory.glob("*.json")):
            document = orjson.loads(path.read_bytes())
            for key in document:
                if key not in ("nodes", "$schema"):
                    cases.append(
                        pytest.param(path, None, key, id=f"{path.parent.name}/{path.stem}:{key}")
                    )
            for index, node in enumerate(document["nodes"]):
                for key in node:
                    if key not in ("id", "type"):
                        cases.append(
                            pytest.param(
                                path,
                                index,
                                key,
                                id=f"{path.parent.name}/{path.stem}:{node['id']}.{key}",
                            )
                        )
    return cases


def _rename(mapping: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    return {new if k == old else k: v for k, v in mapping.items()}


@pytest.mark.parametrize(("path", "index", "key"), _cases())
def test_one_misspelt_field_is_one_diagnostic(path: Path, index: int | None, key: str) -> None:
    context = CheckContext(library=PlaybookLibrary(LIBRARIES[path.parent]))
    document = orjson.loads(path.read_bytes())
    before = check_document(orjson.dumps(document), context=context).diagnostics
    assert not any(d.severity is Severity.ERROR for d in before)
    if index is None:
        typo = _typo(key, TOP_FIELDS)
        document = _rename(document, key, typo)
        pointer = f"/{typo}"
    else:
        node = document["nodes"][index]
        typo = _typo(key, set(BUILTIN_NODE_TYPES.models[node["type"]].model_fields))
        document["nodes"][index] = _rename(node, key, typo)
        pointer = f"/nodes/{index}/{typo}"
    result = check_document(orjson.dumps(document, option=orjson.OPT_INDENT_2), context=context)
    errors = [(d.code, d.pointer) for d in result.errors]
    assert errors == [("SEA011", pointer)], [d.format_human() for d in result.diagnostics]
    assert {d.code for d in result.warnings} <= {d.code for d in before}
