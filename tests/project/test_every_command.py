"""``sea validate``, ``sea replay``, ``sea graph`` and ``sea plan`` read the project file too
(issue 34): a flag, then a ``SEA_*`` variable, then the file, then the default."""

from __future__ import annotations

import orjson
import pytest

from tests.lang.test_cli import DATA
from tests.project.conftest import Sea
from tests.trace.test_cli_plans import OUTLINE, SCRIPT, TASK

BAD = '{"name": "broken", "nodes": [{"id": "a", "type": "nope"}], "start": "a"}'


def playbook(name: str) -> str:
    """A valid playbook of one ``pass`` node named ``only``."""
    return orjson.dumps({"name": name, "description": "Nothing.", "start_node": "only",
                         "nodes": [{"id": "only", "type": "pass"}]}).decode()


def test_validate_checks_the_project_playbooks_with_its_tools(sea: Sea) -> None:
    project = sea.write("sea.toml", 'playbooks = ["pb"]\ntools = ["tools.json"]\n')
    sea.write("tools.json", (DATA / "tools.json").read_text())
    sea.write("pb/broken.json", BAD)
    done = sea("validate", "--no-cache")
    assert done.code == 1, done.err
    assert f"{sea.root / 'pb' / 'broken.json'}:" in done.out
    assert sea.setting("playbooks", "validate") == ([str(sea.root / "pb")], f"{project}:1")
    assert sea.setting("tools", "validate") == ([str(sea.root / "tools.json")],
                                                f"{project}:2")
    sea.write("other/calls.json", orjson.dumps({
        "name": "calls", "description": "Calls a tool the host lacks.", "start_node": "only",
        "nodes": [{"id": "only", "type": "tool", "action": "no_such_tool", "args": {}}],
    }).decode())
    done = sea("validate", "--no-cache", "other")  # a PATH replaces the file's directories
    assert done.code == 1 and "no_such_tool" in done.out, done.err  # the file's tools known
    assert sea("validate", "--no-cache", "--no-project", "other").code == 0


def test_validate_without_paths_or_a_project_says_what_to_give(sea: Sea) -> None:
    done = sea("validate")
    assert done.code == 2
    assert "name the playbook files or directories to check" in done.err


def test_migrate_takes_the_project_playbooks_unless_given_paths(sea: Sea) -> None:
    sea.write("sea.toml", 'playbooks = ["pb"]\n')
    sea.write("pb/old.json", orjson.dumps({  # a SAIVerse habit: exec with "action": null
        "name": "old", "description": "Runs a playbook.", "start_node": "go",
        "nodes": [{"id": "go", "type": "exec", "playbook_source": "input", "action": None}],
    }).decode())
    done = sea("migrate")
    assert done.code == 0, done.err
    assert str(sea.root / "pb" / "old.json") in done.out and "1 would change" in done.err
    added = [line for line in done.out.splitlines() if line.startswith("+{")]
    assert added and '"action"' not in added[0]  # the null action is migrated away
    assert sea("migrate", "--no-project").code == 2
    sea.write("other/fine.json", playbook("fine"))
    done = sea("migrate", "other")  # a PATH replaces the file's directories
    assert done.code == 0 and "old.json" not in done.out, done.out


def test_replay_and_graph_take_the_project_playbooks(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = sea.write("sea.toml", 'playbooks = ["pb"]\n')
    assert sea.setting("playbooks", "replay") == ([str(sea.root / "pb")], f"{project}:1")
    monkeypatch.setenv("SEA_PLAYBOOKS", "/elsewhere")
    assert sea.setting("playbooks", "replay") == (["/elsewhere"], "env SEA_PLAYBOOKS")
    assert sea.setting("playbooks", "replay", "x.json", "--playbooks", "d") == \
        (["d"], "flag --playbooks")
    monkeypatch.delenv("SEA_PLAYBOOKS")
    sea.write("pb/mine.json", playbook("mine"))
    done = sea("graph", "mine")
    assert done.code == 0, done.err
    assert "only" in done.out


def test_plan_commands_take_the_project_store_workspace_and_run_policy(sea: Sea) -> None:
    project = sea.write("sea.toml", 'db = "memory.sqlite"\nworkspace = "ws"\n'
                        '[plans]\nallow_run = ["true"]\nrun_env = ["LANG"]\n')
    (sea.root / "ws").mkdir()
    assert sea.setting("workspace", "plan", "execute") == (str(sea.root / "ws"),
                                                           f"{project}:2")
    assert sea.setting("plans.allow_run", "plan", "execute") == (["true"], f"{project}:4")
    assert sea.setting("plans.run_env", "plan", "approve") == (["LANG"], f"{project}:5")
    waiting = sea("run", "--input", TASK, "--model", sea.script(SCRIPT), "--json")
    assert waiting.code == 0, waiting.err
    assert orjson.loads(waiting.out)["status"] == "waiting"
    preview = sea("plan", "preview", "--json")
    assert preview.code == 0, preview.err
    assert orjson.loads(preview.out)["files"] == ["notes", "notes/outline.md"]
    approved = sea("plan", "approve", "--approve", "all")
    assert approved.code == 0, approved.err
    executed = sea("plan", "execute")
    assert executed.code == 0, executed.err
    assert (sea.root / "ws" / "notes" / "outline.md").read_text() == OUTLINE


def test_a_plan_command_without_a_workspace_says_where_to_give_one(sea: Sea) -> None:
    sea.write("sea.toml", 'db = "memory.sqlite"\n')
    sea.write("ws/.keep", "")
    waiting = sea("run", "--input", TASK, "--model", sea.script(SCRIPT), "--workspace", "ws",
                  "--json")
    assert waiting.code == 0, waiting.err
    done = sea("plan", "preview")
    assert done.code == 2
    assert "--workspace DIR (or workspace in the project file" in done.err
