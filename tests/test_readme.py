"""The README's tour does what it shows: its example playbook validates, fails as shown when
broken, and runs with the command line shown."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from sea.cli import main

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _example() -> str:
    found = re.search(r"```json\n(.*?)```", README, re.S)
    assert found is not None, "the README has no JSON playbook example"
    return found.group(1)


def _shown_diagnostic() -> list[str]:
    start = README.index("    mood_reply.json:")
    lines = README[start:].splitlines()[:2]
    return [line.strip() for line in lines]


@pytest.fixture
def my_playbooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SEA_DB", str(tmp_path / "home" / "memory.sqlite"))
    directory = tmp_path / "my_playbooks"
    directory.mkdir()
    (directory / "mood_reply.json").write_text(_example(), encoding="utf-8")
    return directory


def test_the_example_playbook_validates_strictly(
    my_playbooks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "--strict", str(my_playbooks / "mood_reply.json")]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().err


def test_the_diagnostic_shown_is_what_validate_prints(
    my_playbooks: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _example().replace(
        '"context_profile": "router",', '"context_profile": "router",\n      "tools": [],', 1
    )
    (my_playbooks / "mood_reply.json").write_text(broken, encoding="utf-8")
    monkeypatch.chdir(my_playbooks)
    assert main(["validate", "mood_reply.json"]) == 1
    printed = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert _shown_diagnostic() == printed[:2]


def test_the_example_runs_as_shown(
    my_playbooks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {
        "mood_reply.read_mood": [{"cheerful": False}],
        "sub_speak.compose": ["That sounds tiring; rest a little."],
    }}))
    code = main(["run", "my_playbooks/mood_reply.json", "--input", "I'm tired",
                 "--playbooks", "my_playbooks", "--model", f"scripted:{script}", "--json"])
    assert code == 0
    result = orjson.loads(capsys.readouterr().out)
    assert result["spoken"] == ["That sounds tiring; rest a little."]
    notes = [w for w in result["memory_writes"] if w["playbook"] == "mood_reply"]
    assert [(w["role"], w["tags"][0]) for w in notes] == [("user", "mood")]
    assert notes[0]["content"].startswith("<system>The user seems down")
