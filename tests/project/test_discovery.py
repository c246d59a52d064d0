"""Finding the project file: ``sea.toml`` or ``[tool.sea]`` in ``pyproject.toml``, from the
current directory upward; ``--project FILE``, ``SEA_PROJECT`` and ``--no-project``."""

from __future__ import annotations

import os

import pytest

from tests.project.conftest import Sea


def test_a_sea_toml_above_the_current_directory_is_found_and_its_paths_are_its_own(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = sea.write("sea.toml", '# a project\ndb = "data/memory.sqlite"\n'
                        'playbooks = ["books"]\n')
    deep = sea.root / "src" / "deeper"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    found = sea.config()
    assert found["project"] == str(project)
    assert found["settings"]["db"] == {
        "option": "--db", "env": "SEA_DB", "value": str(sea.root / "data" / "memory.sqlite"),
        "source": f"{project}:2"}
    assert found["settings"]["playbooks"]["value"] == [str(sea.root / "books")]
    assert found["settings"]["playbooks"]["source"] == f"{project}:3"


def test_the_tool_sea_table_of_a_pyproject_is_a_project_file(sea: Sea) -> None:
    pyproject = sea.write("pyproject.toml", '[project]\nname = "mine"\n\n[tool.sea]\n'
                          'persona = "mira"\n\n[tool.sea.budget]\nmax_calls = 4\n')
    assert sea.setting("persona") == ("mira", f"{pyproject}:5")
    assert sea.setting("budget.max_calls") == (4, f"{pyproject}:8")


def test_a_pyproject_without_tool_sea_is_passed_over_for_a_project_above_it(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = sea.write("sea.toml", 'persona = "mira"\n')
    sea.write("lib/pyproject.toml", '[project]\nname = "lib"\n[tool.ruff]\nline-length = 90\n')
    monkeypatch.chdir(sea.root / "lib")
    assert sea.config()["project"] == str(project)


def test_a_sea_toml_wins_over_a_pyproject_in_the_same_directory(sea: Sea) -> None:
    project = sea.write("sea.toml", 'persona = "from_sea_toml"\n')
    sea.write("pyproject.toml", '[tool.sea]\npersona = "from_pyproject"\n')
    assert sea.setting("persona") == ("from_sea_toml", f"{project}:1")


def test_without_a_project_file_every_setting_is_its_default(sea: Sea) -> None:
    found = sea.config()
    assert found["project"] is None
    assert {s["source"] for s in found["settings"].values()} == {"default"}
    assert found["settings"]["model.name"]["value"] == "local"


def test_project_and_sea_project_name_a_file_and_no_project_ignores_it(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    sea.write("sea.toml", 'persona = "near"\n')
    other = sea.write("elsewhere/other.toml", 'persona = "named"\n')
    assert sea.setting("persona", "--project", str(other)) == ("named", f"{other}:1")
    assert sea.setting("persona", "run", "--project", str(other))[0] == "named"
    monkeypatch.setenv("SEA_PROJECT", str(other))
    assert sea.setting("persona")[0] == "named"
    assert sea.setting("persona", "--no-project") == (None, "default")


def test_a_named_project_file_that_does_not_exist_is_a_usage_error(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    done = sea("memory", "recent", "--project", "missing.toml")
    assert done.code == 2
    assert "SEA381 error: --project missing.toml: no such file" in done.err
    assert "Traceback" not in done.err
    monkeypatch.setenv("SEA_PROJECT", "gone.toml")
    done = sea("config")
    assert done.code == 2 and "SEA_PROJECT gone.toml: no such file" in done.err
    assert not (sea.root.parent / "home").exists()  # nothing was made


def test_the_repository_itself_has_no_project_file() -> None:
    """Tests run from the repository's root: a project file there would change them all."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert not os.path.exists(os.path.join(root, "sea.toml"))
    with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as file:
        assert "[tool.sea" not in file.read()
