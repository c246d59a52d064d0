"""`sea validate` keeps its verdicts: an unchanged run is answered from the cache, and any
change to what the checks read (a playbook, a called playbook, an option, a catalogue, SEA
itself) is checked again."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sea.cli import main
from sea.cli._verdicts import _package_files, verdict_key

CALLER = {
    "name": "caller",
    "description": "Calls the helper.",
    "start_node": "call",
    "nodes": [{"id": "call", "type": "subplay", "playbook": "helper",
               "args": {"text": "hello"}, "next": None}],
}
HELPER = {
    "name": "helper",
    "description": "Says what it was given.",
    "input_schema": [{"name": "text", "description": "What to say."}],
    "output_schema": ["said"],
    "start_node": "say",
    "nodes": [{"id": "say", "type": "set", "assignments": {"said": "{text}"}, "next": None}],
}


def _write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def _entries() -> list[Path]:
    return sorted((Path(os.environ["SEA_CACHE_DIR"]) / "validate").glob("*.json"))


def _validate(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    code = main(["validate", *words])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def playbooks(tmp_path: Path) -> Path:
    directory = tmp_path / "playbooks"
    directory.mkdir()
    _write(directory / "caller.json", CALLER)
    _write(directory / "helper.json", HELPER)
    return directory


def test_an_unchanged_run_is_answered_from_the_cache_in_every_format(
    playbooks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = dict(HELPER, nodes=[{"id": "say", "type": "sett", "next": None}])
    _write(playbooks / "helper.json", bad)
    first = _validate(capsys, str(playbooks))
    assert first[0] == 1 and "SEA0" in first[1]
    (entry,) = _entries()
    stored = json.loads(entry.read_bytes())
    # the entry is what answers: rewritten by hand, its text is what the next run prints
    stored["diagnostics"][0]["message"] = "as kept in the cache"
    entry.write_bytes(json.dumps(stored).encode())
    second = _validate(capsys, str(playbooks))
    assert second[0] == 1 and "as kept in the cache" in second[1]
    as_json = _validate(capsys, "--json", str(playbooks))
    assert [d["message"] for d in json.loads(as_json[1])][0] == "as kept in the cache"
    assert len(_entries()) == 1  # the format is not part of the verdict
    fresh = _validate(capsys, "--no-cache", str(playbooks))
    assert fresh == first  # checked again, the same verdict as the first run


def test_a_changed_playbook_is_checked_again(
    playbooks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _validate(capsys, str(playbooks))[0] == 0
    _write(playbooks / "caller.json", dict(CALLER, start_node="nowhere"))
    code, out, _ = _validate(capsys, str(playbooks))
    assert code == 1 and "nowhere" in out
    assert len(_entries()) == 2


def test_a_changed_called_playbook_beside_a_named_file_is_checked_again(
    playbooks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    caller = str(playbooks / "caller.json")
    assert _validate(capsys, caller)[0] == 0
    _write(playbooks / "helper.json", dict(HELPER, name="assistant"))  # `helper` is gone
    code, out, _ = _validate(capsys, caller)
    assert code == 1 and "helper" in out


def test_strict_and_a_changed_catalogue_are_other_verdicts(
    playbooks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(playbooks / "helper.json", dict(HELPER, nodes=[
        {"id": "say", "type": "tool", "action": "shout", "args": {"text": "{text}"},
         "output_key": "said", "next": None}]))
    catalogue = tmp_path / "tools.json"
    catalogue.write_text(json.dumps({"shout": {"type": "object", "properties": {
        "text": {"type": "string"}}}}), encoding="utf-8")
    assert _validate(capsys, str(playbooks))[0] == 0
    assert _validate(capsys, "--strict", str(playbooks))[0] == 1  # `shout` is not built in
    assert _validate(capsys, "--tools", str(catalogue), str(playbooks))[0] == 0
    catalogue.write_text(json.dumps({"whisper": None}), encoding="utf-8")
    code, out, _ = _validate(capsys, "--tools", str(catalogue), str(playbooks))
    assert code == 1 and "shout" in out
    assert len(_entries()) == 4


SHOUT_MODULE = """
from langchain_core.tools import tool


@tool
def shout(text: str) -> str:
    \"\"\"The text in capitals.\"\"\"
    return text.upper()


TOOLS = [shout]
"""


def test_no_cache_keeps_nothing_and_a_module_s_tools_are_never_kept(
    playbooks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _validate(capsys, "--no-cache", str(playbooks))[0] == 0
    assert _entries() == []
    (tmp_path / "shouting_tools.py").write_text(SHOUT_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _validate(capsys, "--tools", "shouting_tools", str(playbooks))[0] == 0
    assert _entries() == []


def test_an_unreadable_entry_counts_as_absent_and_an_unwritable_cache_as_none(
    playbooks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = _validate(capsys, str(playbooks))
    (entry,) = _entries()
    entry.write_bytes(b"{not json")
    assert _validate(capsys, str(playbooks)) == first
    assert json.loads(entry.read_bytes())["diagnostics"] == []  # written again
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("SEA_CACHE_DIR", str(blocked))
    assert _validate(capsys, str(playbooks)) == first


def test_sea_s_own_files_are_part_of_the_key(tmp_path: Path) -> None:
    package = tmp_path / "package"
    (package / "lang").mkdir(parents=True)
    module = package / "lang" / "checks.py"
    module.write_text("A = 1\n", encoding="utf-8")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.pyc").write_bytes(b"compiled")
    before = _package_files(package)
    assert [name for name, _, _ in before] == [os.path.join("lang", "checks.py")]
    module.write_text("A = 22\n", encoding="utf-8")  # an edited checkout
    assert _package_files(package) != before


def test_the_bundled_playbooks_and_schemas_beside_the_package_are_part_of_the_key(
    tmp_path: Path,
) -> None:
    # a source checkout keeps them beside the package (sea.resources), not inside it
    bundled = tmp_path / "playbooks"
    bundled.mkdir()
    callee = bundled / "sub_speak.json"
    callee.write_text(json.dumps(HELPER), encoding="utf-8")
    checked = [(tmp_path / "caller.json", json.dumps(CALLER).encode())]

    def key() -> str:
        return verdict_key(checked, [], strict=False, catalogues=[], data_dirs=[bundled])

    before = key()
    assert key() == before
    callee.write_text(json.dumps(dict(HELPER, name="renamed")), encoding="utf-8")
    assert key() != before
