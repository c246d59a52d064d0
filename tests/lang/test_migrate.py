"""`sea migrate`: SAIVerse-format playbooks rewritten into explicit SEA form, layout kept."""

import json
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sea.cli import main
from sea.errors import Severity
from sea.lang import codes, saiverse
from sea.lang.checks import CheckContext, Signature
from sea.lang.library import PlaybookLibrary
from sea.lang.migrate import LEFT_IMPLICIT, Migration, hinted_renames, migrate_text
from sea.lang.vocabulary import BUILTIN_NODE_TYPES

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SAIVERSE_DIRS = ("saiverse", "saiverse_broken", "saiverse_compat", "saiverse_migrate")
HOST_TOOLS = ("record_wait", "generate_image")
"""Tools of the SAIVerse host that the test playbooks call, beside tests/data/tools.json."""
NEEDS_THE_AUTHOR = frozenset({codes.DYNAMIC_CALLEE_VARIABLE})
"""Findings no rewrite can settle: which playbooks an `exec` may run is the author's choice
(SAIVerse ran any playbook by name; SEA runs the router-callable ones or those listed)."""


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(DATA / name, target)
    return target


def _catalogue(tmp_path: Path) -> Path:
    tools = json.loads((DATA / "tools.json").read_text())["tools"]
    tools += [{"name": name, "parameters": None} for name in HOST_TOOLS]
    path = tmp_path / "host_tools.json"
    path.write_text(json.dumps({"tools": tools}))
    return path


def _migrate_dir(directory: Path) -> list[Migration]:
    context = PlaybookLibrary.bundled([directory]).context()
    return [
        migrate_text(path.read_bytes(), file=str(path), context=context)
        for path in sorted(directory.glob("*.json"))
    ]


def _strict(directory: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """``sea validate --strict --json`` with the host's tools."""
    capsys.readouterr()
    tools = _catalogue(directory.parent)
    main(["validate", "--strict", "--json", "--tools", str(tools), str(directory)])
    found: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return found


@pytest.mark.parametrize("name", SAIVERSE_DIRS)
def test_migrated_saiverse_playbooks_pass_strict_validation(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _copy(tmp_path, name)
    before = _strict(directory, capsys)
    assert main(["migrate", "--write", str(directory)]) == 0
    after = _strict(directory, capsys)
    left = [d for d in after if d["code"] not in NEEDS_THE_AUTHOR]
    assert left == []
    assert [d for d in before if d["code"] not in NEEDS_THE_AUTHOR]  # there was work to do


@pytest.mark.parametrize("name", SAIVERSE_DIRS)
def test_a_second_migration_changes_nothing(tmp_path: Path, name: str) -> None:
    directory = _copy(tmp_path, name)
    assert main(["migrate", "--write", str(directory)]) == 0
    written = {p: p.read_bytes() for p in directory.glob("*.json")}
    again = _migrate_dir(directory)
    assert [m.file for m in again if m.changed] == []
    assert {p: p.read_bytes() for p in directory.glob("*.json")} == written


def test_without_write_the_diff_is_printed_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _copy(tmp_path, "saiverse_migrate")
    original = {p: p.read_bytes() for p in directory.glob("*.json")}
    assert main(["migrate", str(directory)]) == 0
    out, err = capsys.readouterr()
    assert {p: p.read_bytes() for p in directory.glob("*.json")} == original
    note = directory / "sub_note.json"
    assert f"--- {note}\n+++ {note}\n" in out
    assert '-            "tools": ["memory_search"],\n' in out
    assert '+            "available_tools": ["memory_search"],\n' in out
    assert "2 files checked: 2 would change, 0 could not be migrated" in err


def test_write_rewrites_in_place_and_prints_the_same_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _copy(tmp_path, "saiverse_migrate")
    assert main(["migrate", str(directory)]) == 0
    preview = capsys.readouterr().out
    assert main(["migrate", "--write", str(directory)]) == 0
    out, err = capsys.readouterr()
    assert out == preview
    assert "2 rewritten" in err
    assert main(["migrate", str(directory)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "0 would change" in err


def test_the_layout_is_kept(tmp_path: Path) -> None:
    path = _copy(tmp_path, "saiverse_migrate") / "sub_note.json"
    original = path.read_text(encoding="utf-8")
    (migration,) = [m for m in _migrate_dir(path.parent) if m.file == str(path)]
    assert migration.migrated is not None
    kept = migration.migrated.splitlines()
    gone = [line for line in original.splitlines() if line not in kept]
    # only the lines holding a SAIVerse spelling changed; the rest is byte for byte
    markers = ('"version"', '"source"', '"tools"', '"True"', '"False"', '"bool"', '"int"')
    assert gone and all(any(m in line for m in markers) for line in gone)
    assert '            "id": "recall",' in kept  # four-space indentation
    assert "メモを残す" in migration.migrated and "\\u" not in migration.migrated
    before, after = orjson.loads(original), orjson.loads(migration.migrated)
    assert list(after) == [key for key in before if key != "version"]
    assert list(after["nodes"][0]) == [
        "available_tools" if key == "tools" else key for key in before["nodes"][0]
    ]


def test_what_the_migration_states(tmp_path: Path) -> None:
    directory = _copy(tmp_path, "saiverse_migrate")
    _migrate_dir(directory)
    assert main(["migrate", "--write", str(directory)]) == 0
    meta = orjson.loads((directory / "meta_legacy.json").read_bytes())
    note = orjson.loads((directory / "sub_note.json").read_bytes())
    nodes = {node["id"]: node for node in meta["nodes"]}
    assert "model" not in meta
    assert nodes["init"]["assignments"] == {"executed_playbooks": []}
    assert nodes["note"]["args"] == {"input": "{input}"}  # no args: the caller's input
    assert nodes["again"]["args"] == {"input": "{input}"}  # empty args: the same
    assert nodes["recap"]["args"] == {"input": "Recap: {input}"}  # was `input_template`
    assert "input_template" not in nodes["recap"]
    assert nodes["run"]["args"] == {"input": "{input}"}  # exec: whatever it runs
    assert "next" not in nodes["check"]  # `conditional_next` decided alone
    assert note["input_schema"][0] == {"name": "input", "description": "何について",
                                       "param_type": "string"}
    properties = note["nodes"][3]["response_schema"]["properties"]
    assert (properties["useful"]["type"], properties["score"]["type"]) == ("boolean", "integer")
    cases = [node.get("conditional_next", {}).get("cases") for node in note["nodes"]]
    assert cases[1] == {"true": "search", "false": "judge"}
    assert cases[4] == {"true": "tone", "default": None}
    assert cases[5] == {"True": "memo", "default": None}  # a string enum: "True" is text


def test_an_output_nothing_defines_is_removed(tmp_path: Path) -> None:
    directory = _copy(tmp_path, "saiverse")
    migrations = _migrate_dir(directory)
    (migration,) = [m for m in migrations if str(m.file).endswith("sub_router_user.json")]
    assert migration.migrated is not None
    assert orjson.loads(migration.migrated)["output_schema"] == ["selected_playbook"]
    assert [c.pointer for c in migration.changes] == ["/output_schema/1"]


class _Callees:
    """A playbook index of two callees: one declares `input`, one does not."""

    def names(self) -> list[str]:
        return ["takes_input", "takes_topic"]

    def signature(self, name: str) -> Signature | None:
        params = {"takes_input": {"input": True}, "takes_topic": {"topic": True}}.get(name)
        return None if params is None else Signature(name, params)


def _playbook(*nodes: Mapping[str, Any], **top: Any) -> str:
    document = {
        "name": "caller",
        "description": "A caller.",
        "input_schema": [{"name": "input", "description": "x"}],
        "start_node": nodes[0]["id"],
        "nodes": list(nodes),
        **top,
    }
    return json.dumps(document, indent=2)


def _migrated(text: str) -> Any:
    migration = migrate_text(text, context=CheckContext(library=_Callees()))
    assert migration.migrated is not None
    return orjson.loads(migration.migrated)


def test_input_is_passed_explicitly_only_to_a_callee_that_declares_it() -> None:
    document = _migrated(
        _playbook(
            {"id": "a", "type": "subplay", "playbook": "takes_input", "next": "b"},
            {"id": "b", "type": "subplay", "playbook": "takes_topic", "next": "c"},
            {"id": "c", "type": "subplay", "playbook": "missing", "next": "d"},
            {"id": "d", "type": "subplay", "playbook": "takes_input", "args": {"input": "x"}},
        )
    )
    assert [node.get("args") for node in document["nodes"]] == [
        {"input": "{input}"}, None, None, {"input": "x"},
    ]  # fmt: skip


def test_a_case_key_is_left_when_lowercasing_it_would_clash() -> None:
    branch = {"field": "flag", "cases": {"True": "a", "true": "a"}}
    document = _migrated(
        _playbook(
            {"id": "a", "type": "set", "assignments": {"flag": True}, "next": "b"},
            {"id": "b", "type": "pass", "conditional_next": branch},
        )
    )
    assert document["nodes"][1]["conditional_next"]["cases"] == {"True": "a", "true": "a"}


def test_executed_playbooks_given_by_the_caller_is_not_overwritten() -> None:
    set_node = {"id": "a", "type": "set", "assignments": {"executed_playbooks_init": True}}
    params = [{"name": "executed_playbooks", "description": "so far", "required": False}]
    document = _migrated(_playbook(set_node, input_schema=params))
    assert document["nodes"][0]["assignments"] == {"executed_playbooks_init": True}


def test_a_field_renamed_only_when_the_sea_field_is_absent() -> None:
    llm = {"id": "a", "type": "llm", "action": "hi", "tools": ["x"], "available_tools": ["y"]}
    document = _migrated(_playbook(llm))
    assert document["nodes"][0]["tools"] == ["x"]


def test_renames_come_from_the_compatibility_rules_and_the_known_mistakes() -> None:
    assert hinted_renames("llm")["tools"] == "available_tools"
    assert hinted_renames("tool")["arguments"] == "args"
    for node_type, model in BUILTIN_NODE_TYPES.models.items():
        for wrong, right in hinted_renames(node_type).items():
            assert right in model.model_fields and wrong not in model.model_fields
    for node_type, renames in saiverse.RENAMED_FIELDS.items():
        assert dict(renames).items() <= dict(hinted_renames(node_type)).items()


@pytest.mark.parametrize(
    ("content", "code", "line"),
    [
        (b'{\n  "name": "x",\n  "nodes": [\n', codes.INVALID_JSON, 4),
        (b"[1, 2]", codes.NOT_AN_OBJECT, 1),
        (b'{"name": "x", "nodes": {}}', codes.MISSING_FIELD, 1),
        (b'{"name": "x",\n "name": "y", "nodes": []}', codes.DUPLICATE_KEY, 2),
        (b'{"name": "\xff"}', codes.INVALID_UTF8, 1),
    ],
)
def test_a_file_that_is_not_a_playbook_is_a_located_error(
    content: bytes, code: str, line: int
) -> None:
    migration = migrate_text(content, file="bad.json")
    assert migration.failed and not migration.changed and migration.diff() == ""
    (diagnostic,) = migration.diagnostics
    assert (diagnostic.code, diagnostic.severity, diagnostic.file) == (
        code, Severity.ERROR, "bad.json",
    )  # fmt: skip
    assert diagnostic.line == line and diagnostic.hint


def test_a_repeated_member_is_named_as_written() -> None:
    # before: the name was shown as its pointer segment (`a~1b`)
    migration = migrate_text(b'{"name": "x", "nodes": [],\n "a/b~": 1, "a/b~": 2}')
    (diagnostic,) = migration.diagnostics
    assert diagnostic.code == codes.DUPLICATE_KEY and diagnostic.line == 2
    assert "member `a/b~` is given twice" in diagnostic.message
    assert diagnostic.pointer == "/a~1b~0"


def test_bad_files_do_not_stop_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _copy(tmp_path, "saiverse_migrate")
    (directory / "broken.json").write_text('{"name": "broken",\n  "nodes": [}\n')
    (directory / "list.json").write_text("[]")
    assert main(["migrate", "--write", str(directory)]) == 1
    out, err = capsys.readouterr()
    assert f"{directory / 'broken.json'}:2:13: SEA003 error: invalid JSON" in err
    assert f"{directory / 'list.json'}:1:1: SEA004 error" in err
    assert "4 files checked: 2 rewritten, 2 could not be migrated" in err
    assert '"available_tools"' in (directory / "sub_note.json").read_text(encoding="utf-8")
    assert (directory / "list.json").read_text() == "[]"


def test_a_path_that_does_not_exist_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _copy(tmp_path, "saiverse_migrate")
    assert main(["migrate", "--write", str(directory), str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err
    assert '"tools"' in (directory / "sub_note.json").read_text(encoding="utf-8")


def test_a_byte_order_mark_is_kept(tmp_path: Path) -> None:
    source = (DATA / "saiverse_broken" / "x_reply.json").read_bytes()
    path = tmp_path / "x_reply.json"
    path.write_bytes(b"\xef\xbb\xbf" + source)
    assert main(["migrate", "--write", str(path)]) == 0
    written = path.read_bytes()
    assert written.startswith(b"\xef\xbb\xbf") and b'"true": "reply"' in written


def test_the_docs_name_every_variable_left_implicit() -> None:
    page = ROOT / "docs" / "guides" / "coming-from-saiverse.md"
    readme = page.read_text(encoding="utf-8")
    section = readme[readme.index("## `sea migrate`") :]
    missing = [name for name in LEFT_IMPLICIT if f"`{name}`" not in section]
    assert missing == []


SEEDS = [
    (path.name, path.read_text(encoding="utf-8"))
    for name in SAIVERSE_DIRS
    for path in sorted((DATA / name).glob("*.json"))
]
CONTEXT = CheckContext(library=PlaybookLibrary([DATA / "saiverse_migrate", DATA / "saiverse"]))
LAYOUTS = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 1, 2, 4, "\t"]),
        "ensure_ascii": st.booleans(),
        "separators": st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]),
    }
)


def _sea_form(text: str) -> str:
    migrated = migrate_text(text, context=CONTEXT).migrated
    assert migrated is not None
    return migrated


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS), layout=LAYOUTS)
def test_migration_is_idempotent_and_independent_of_the_layout(
    seed: tuple[str, str], layout: dict[str, Any]
) -> None:
    _, text = seed
    relaid = json.dumps(json.loads(text), **layout)
    once = _sea_form(relaid)
    assert _sea_form(once) == once
    assert orjson.loads(once) == orjson.loads(_sea_form(text))


def _saiverse_spellings(document: Any, data: st.DataObject) -> Any:
    """The document with SAIVerse's spellings put back where SEA's are."""
    draw = data.draw
    if "version" not in document and draw(st.booleans()):
        document["version"] = draw(st.integers(1, 9))
    for node in document["nodes"]:
        if node.get("type") == "llm" and "available_tools" in node and draw(st.booleans()):
            node["tools"] = node.pop("available_tools")
        properties = (node.get("response_schema") or {}).get("properties") or {}
        for schema in properties.values():
            if schema.get("type") == "integer" and draw(st.booleans()):
                schema["type"] = "int"
    return document


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS), data=st.data())
def test_saiverse_spellings_put_back_are_migrated_away_again(
    seed: tuple[str, str], data: st.DataObject
) -> None:
    _, text = seed
    sea_form = orjson.loads(_sea_form(text))
    again = _saiverse_spellings(orjson.loads(_sea_form(text)), data)
    assert orjson.loads(_sea_form(json.dumps(again, indent=2, ensure_ascii=False))) == sea_form


SCRIPT = """
import sys
from sea.cli import main
code = main(["migrate", sys.argv[1]])
heavy = sorted(m for m in ("langgraph", "langchain_core", "prompt_toolkit") if m in sys.modules)
print(code, heavy)
"""


def test_migrate_imports_no_langgraph_or_langchain() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(DATA / "saiverse_migrate")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []"
