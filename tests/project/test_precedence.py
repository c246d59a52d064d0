"""Each setting comes from the first of: a flag, a ``SEA_*`` environment variable, the
project file, the built-in default; ``sea config --json`` shows which."""

from __future__ import annotations

import os

import pytest

from tests.project.conftest import Sea


def test_default_then_file_then_environment_then_flag(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert sea.setting("budget.max_calls") == (None, "default")
    project = sea.write("sea.toml", "[budget]\nmax_calls = 4\n")
    assert sea.setting("budget.max_calls") == (4, f"{project}:2")
    monkeypatch.setenv("SEA_MAX_CALLS", "5")
    assert sea.setting("budget.max_calls") == (5, "env SEA_MAX_CALLS")
    assert sea.setting("budget.max_calls", "run", "--max-calls", "6") == \
        (6, "flag --max-calls")


def test_the_store_from_each_source(sea: Sea, monkeypatch: pytest.MonkeyPatch) -> None:
    project = sea.write("sea.toml", 'db = ".sea/memory.sqlite"\n')
    assert sea.setting("db") == (str(sea.root / ".sea" / "memory.sqlite"), f"{project}:1")
    monkeypatch.setenv("SEA_DB", "postgresql://db.example/sea")
    assert sea.setting("db") == ("postgresql://db.example/sea", "env SEA_DB")
    assert sea.setting("db", "memory", "recent", "--db", "x.sqlite") == \
        ("x.sqlite", "flag --db")
    assert not (sea.root / ".sea").exists()  # sea config makes nothing


def test_a_flag_replaces_a_listed_setting_instead_of_adding_to_it(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = sea.write("sea.toml", 'playbooks = ["a", "b"]\nask_before = ["x"]\n')
    assert sea.setting("playbooks") == ([str(sea.root / "a"), str(sea.root / "b")],
                                        f"{project}:1")
    monkeypatch.setenv("SEA_PLAYBOOKS", os.pathsep.join(["/p/one", "/p/two"]))
    monkeypatch.setenv("SEA_ASK_BEFORE", "y, z")
    assert sea.setting("playbooks") == (["/p/one", "/p/two"], "env SEA_PLAYBOOKS")
    assert sea.setting("ask_before") == (["y", "z"], "env SEA_ASK_BEFORE")
    assert sea.setting("playbooks", "run", "--playbooks", "c") == (["c"], "flag --playbooks")


def test_model_settings_and_the_model_file_relative_to_the_project(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = sea.write("sea.toml", '[model]\nname = "scripted:script.json"\n'
                        'options = { temperature = 0.2 }\n[light_model]\nname = "local"\n')
    monkeypatch.chdir(sea.root.parent)
    found = sea.config("--project", str(project))["settings"]
    assert found["model.name"]["value"] == f"scripted:{sea.root / 'script.json'}"
    assert found["model.options"] == {"option": "--model-option", "env": None,
                                      "value": {"temperature": 0.2},
                                      "source": f"{project}:3"}
    assert found["light_model.name"]["value"] == "local"
    monkeypatch.setenv("SEA_MODEL", "openai:gpt-4o-mini")
    assert sea.setting("model.name", "--project", str(project)) == \
        ("openai:gpt-4o-mini", "env SEA_MODEL")


def test_a_setting_applies_only_to_the_commands_it_belongs_to(sea: Sea) -> None:
    sea.write("sea.toml", 'persona = "mira"\nbusy_timeout = 20\n[worker]\nbusy_timeout = 90\n'
              'concurrency = 3\n')
    run = sea.config("run")["settings"]
    worker = sea.config("worker")["settings"]
    assert run["busy_timeout"]["value"] == 20.0 and "worker.busy_timeout" not in run
    assert worker["worker.busy_timeout"]["value"] == 90.0 and "busy_timeout" not in worker
    assert worker["worker.concurrency"]["value"] == 3 and "persona" not in worker
    assert sea.config("memory", "recent")["settings"]["persona"]["value"] == "mira"
    assert sea.config("stats")["settings"].keys() == {"db"}  # its --persona is a filter
    assert sea.config("validate")["settings"].keys() == {"playbooks", "tools", "mcp"}
    assert sea.config("migrate")["settings"].keys() == {"playbooks"}  # its PATHs
    done = sea("config", "init")
    assert done.code == 2 and "sea init takes no project setting" in done.err


def test_the_settings_reach_the_command(sea: Sea) -> None:
    """A pulse run with the project file's budget is bounded by it (SEA566)."""
    sea.write("script.json", '{"default": ["a thought"]}')
    sea.write("books/think.json", '{"name": "think", "description": "Thinks twice.", '
              '"start_node": "one", "nodes": ['
              '{"id": "one", "type": "llm", "context_profile": "worker", "action": "Think.", '
              '"output_key": "a", "next": "two"}, '
              '{"id": "two", "type": "llm", "context_profile": "worker", "action": "Again.", '
              '"output_key": "b"}]}')
    sea.write("sea.toml", 'db = "memory.sqlite"\nplaybooks = ["books"]\n'
              'default_playbook = "think"\n[model]\nname = "scripted:script.json"\n'
              '[budget]\nmax_calls = 1\n')
    done = sea("run", "--input", "go", "--json")
    assert done.code == 1, done.err
    assert "SEA566" in done.out and "max_calls" in done.out
    assert (sea.root / "memory.sqlite").is_file()
    assert not (sea.root.parent / "home").exists()


def test_paths_in_the_file_are_relative_to_it_and_module_names_are_left_alone(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = sea.write("sea.toml", 'tools = ["tools.py:TOOLS", "my_pkg.tools"]\n'
                        'mcp = ["servers.json"]\nworkspace = "work"\n'
                        'default_playbook = "books/mine.json"\n')
    (sea.root / "work").mkdir()
    elsewhere = sea.root.parent / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    found = sea.config("--project", str(project))["settings"]
    assert found["tools"]["value"] == [f"{sea.root / 'tools.py'}:TOOLS", "my_pkg.tools"]
    assert found["mcp"]["value"] == [str(sea.root / "servers.json")]
    assert found["workspace"]["value"] == str(sea.root / "work")
    assert found["default_playbook"]["value"] == str(sea.root / "books" / "mine.json")
