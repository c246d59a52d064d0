"""`sea validate` and `sea graph` on `actions` nodes: bounds, tools, the variables they define."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sea.cli import main


def playbook(tmp_path: Path, **act: Any) -> str:
    node = {"id": "act", "type": "actions", "action": "Do {input}",
            "available_tools": ["read_file"], "output_key": "outs", "next": "say", **act}
    document = {
        "name": "acting",
        "description": "Plans tool calls.",
        "start_node": "act",
        "nodes": [node, {"id": "say", "type": "say", "action": "{outs}"}],
    }
    path = tmp_path / "acting.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def diagnostics(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[Any]]:
    code = main(["validate", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_a_valid_actions_node_passes_strict_and_defines_its_output_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert diagnostics(capsys, "--strict", playbook(tmp_path)) == (0, [])


@pytest.mark.parametrize("bound", [0, 33])
def test_max_actions_out_of_bounds_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bound: int
) -> None:
    code, found = diagnostics(capsys, playbook(tmp_path, max_actions=bound))
    assert code == 1
    assert [(d["code"], d["pointer"]) for d in found] == [("SEA009", "/nodes/0/max_actions")]


def test_available_tools_are_checked_against_the_catalogue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = playbook(tmp_path, available_tools=["read_file", "rm_rf"])
    assert diagnostics(capsys, path) == (0, [])  # unchecked without a catalogue
    code, found = diagnostics(capsys, "--strict", path)
    assert code == 1
    assert [(d["code"], d["pointer"]) for d in found] == [
        ("SEA060", "/nodes/0/available_tools/1")]
    catalogue = tmp_path / "tools.json"
    catalogue.write_text(json.dumps([{"name": "rm_rf", "parameters": {"type": "object"}}]))
    assert diagnostics(capsys, "--tools", str(catalogue), path) == (0, [])


def test_an_empty_tool_list_and_a_misnamed_field_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = diagnostics(capsys, playbook(tmp_path, available_tools=[]))
    assert code == 1 and found[0]["pointer"] == "/nodes/0/available_tools"
    document = json.loads(Path(playbook(tmp_path)).read_text())
    document["nodes"][0]["tools"] = document["nodes"][0].pop("available_tools")
    Path(tmp_path / "acting.json").write_text(json.dumps(document))
    code, found = diagnostics(capsys, str(tmp_path / "acting.json"))
    assert code == 1
    (unknown,) = [d for d in found if d["code"] == "SEA011"]
    assert unknown["pointer"] == "/nodes/0/tools" and "available_tools" in unknown["hint"]


def test_a_read_of_an_undefined_variable_is_still_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(Path(playbook(tmp_path)).read_text())
    document["nodes"][1]["action"] = "{outz}"
    Path(tmp_path / "acting.json").write_text(json.dumps(document))
    code, found = diagnostics(capsys, str(tmp_path / "acting.json"))
    assert code == 1 and found[0]["code"] == "SEA030" and "outs" in found[0]["hint"]


def test_graph_draws_the_node_with_its_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["graph", playbook(tmp_path, available_tools=["read_file", "list_files"])]) == 0
    out = capsys.readouterr().out
    assert "n0[[\"act<br/>actions: read_file, list_files\"]]" in out
