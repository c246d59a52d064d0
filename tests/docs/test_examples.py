"""The documentation's examples do what they show, beyond running (tests/docs/test_commands.py
runs every command): the first playbook validates, fails as shown when broken, and writes
its memo; the node type and action pipeline examples do what their pages say."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import orjson
import pytest

from sea.cli import main

DOCS = Path(__file__).resolve().parents[2] / "docs"


def page(name: str) -> str:
    """The text of one page of the documentation site."""
    return (DOCS / name).read_text(encoding="utf-8")


FIRST_PLAYBOOK = page("getting-started/first-playbook.md")


def _example() -> str:
    found = re.search(r"```json\n(.*?)```", FIRST_PLAYBOOK, re.S)
    assert found is not None, "the first playbook page has no JSON playbook example"
    return found.group(1)


def _shown_diagnostic() -> list[str]:
    start = FIRST_PLAYBOOK.index("    mood_reply.json:")
    lines = FIRST_PLAYBOOK[start:].splitlines()[:2]
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


def test_the_node_type_example_validates_and_runs_its_new_type(tmp_path: Path) -> None:
    import asyncio

    from saimemory.records import Persona
    from saimemory.sqlite import SQLiteStore
    from sea.chat.scripted import ScriptedChatModel
    from sea.host.config import RuntimeConfig
    from sea.host.runtime import Runtime
    from sea.lang.loader import check_document
    from sea.llm.models import ModelSet

    section = page("guides/node-types.md")
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, "the node type section has no Python example"
    namespace: dict[str, object] = {}
    exec(compile(found.group(1), "guides/node-types.md", "exec", dont_inherit=True), namespace)
    registry = namespace["registry"]
    document = {
        "name": "shouting",
        "description": "shout the input",
        "start_node": "loud",
        "nodes": [
            {"id": "loud", "type": "shout", "text": "{input}", "output_key": "loud",
             "next": "say"},
            {"id": "say", "type": "say", "action": "{loud}"},
        ],
    }
    types = registry.node_types()  # type: ignore[attr-defined]
    assert check_document(orjson.dumps(document), types=types).diagnostics == []
    folder = tmp_path / "playbooks"
    folder.mkdir()
    (folder / "shouting.json").write_bytes(orjson.dumps(document))
    store = SQLiteStore(str(tmp_path / "memory.sqlite"))
    model = ModelSet.single(ScriptedChatModel.from_mapping({}))
    with Runtime(RuntimeConfig(store, model, library=folder, registry=registry)) as runtime:  # type: ignore[arg-type]
        result = asyncio.run(runtime.arun_pulse(Persona("aoi", "Aoi", ""), "shouting", "hi"))
    assert result.status == "ok" and result.spoken == ["HI"]


def test_the_action_pipeline_example_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    section = page("guides/action-pipelines.md")
    found = re.search(r"```json\n(.*?)```", section, re.S)
    assert found is not None, "the action pipelines section has no playbook"
    command = re.search(r"\n    (sea run draft_from_notes.json .*)\n", section)
    assert command is not None, "the action pipelines section has no command"
    shown_plan = re.search(r"`(\{\"actions\": .*?\})`\.", section, re.S)
    assert shown_plan is not None, "the action pipelines section shows no plan"
    plan = orjson.loads(shown_plan.group(1).replace("\n", " ").replace('"..."', '"to answer"'))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SEA_DB", str(tmp_path / "home" / "memory.sqlite"))
    (tmp_path / "draft_from_notes.json").write_text(found.group(1), encoding="utf-8")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.md").write_text("- water the garden on Sunday\n",
                                                encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {
        "draft_from_notes.work": [plan],
        "sub_speak.compose": ["Water the garden on Sunday."],
    }}))
    words = shlex.split(command.group(1))[1:]
    assert main([*words, "--model", f"scripted:{script}", "--json"]) == 0
    result = orjson.loads(capsys.readouterr().out)
    assert result["status"] == "ok" and result["spoken"] == ["Water the garden on Sunday."]
    memo = [w for w in result["memory_writes"] if w["playbook"] == "draft_from_notes"]
    assert len(memo) == 1 and "water the garden on Sunday" in memo[0]["content"]
    assert '"status":"ok"' in memo[0]["content"]


def test_the_readme_shows_the_first_playbook_and_its_commands_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"```json\n(.*?)```", readme, re.S)
    assert shown is not None and shown.group(1) == _example()
    example = readme.split("\n## One example\n", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"\n    (sea .*)", example)
    assert [c.split()[:2] for c in commands] == [["sea", "validate"], ["sea", "run"]]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SEA_DB", str(tmp_path / "home" / "memory.sqlite"))
    (tmp_path / "my_playbooks").mkdir()
    (tmp_path / "my_playbooks" / "mood_reply.json").write_text(_example(), encoding="utf-8")
    assert main(shlex.split(commands[0])[1:]) == 0
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {
        "mood_reply.read_mood": [{"cheerful": True}], "sub_speak.compose": ["Glad to hear!"]}}))
    capsys.readouterr()
    assert main([*shlex.split(commands[1])[1:], "--model", f"scripted:{script}", "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["spoken"] == ["Glad to hear!"]


def test_the_readme_links_into_the_docs() -> None:
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    links = re.findall(r"\]\((docs/[^)#]+)\)", readme)
    assert len(links) > 10
    for link in links:
        assert (DOCS.parent / link).is_file(), link
