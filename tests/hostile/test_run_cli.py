"""A ``run`` spec through the command line (``sea plan approve``/``execute --allow-run``):
an argument naming a path outside the workspace is refused before anything runs, the host's
environment (a fake ``SECRET_API_KEY``) reaches neither the command nor the store, and the
host's sandbox (``--run-wrapper``) is put in front of the command.

Before: the approval went through, the command wrote outside the workspace, and the key came
back in the stored result.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import orjson
import pytest

from saimemory.sqlite import SQLiteStore
from sea.engine.plans import PlanPolicy, PlanService
from tests.trace.conftest import Outcome, Sea

SECRET_VALUE = "sk-fake-0123456789-do-not-leak"
PYTHON = sys.executable


@pytest.fixture
def sea(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Sea:
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SEA_DB", str(tmp_path / "home" / "memory.sqlite"))
    (tmp_path / "home").mkdir()
    (tmp_path / "ws").mkdir()
    (tmp_path / "outside").mkdir()
    return Sea(tmp_path, capsys)


def planned(sea: Sea, command: list[str]) -> str:
    """A plan of persona aoi with one ``run`` spec of this interpreter, its specs set under
    a policy that allows it (as a pulse leaves it)."""
    store = SQLiteStore(sea.root / "home" / "memory.sqlite")
    try:
        service = PlanService(store, "aoi", sea.root / "ws",
                              PlanPolicy(run_allowlist=frozenset({PYTHON}), run_path=""))
        plan_id = service.propose("Check", "Run the check.").plan_id
        service.set_action_specs(plan_id, [{"kind": "run", "content": shlex.join(command)}])
        return plan_id
    finally:
        store.close()


def approve(sea: Sea, plan_id: str, options: tuple[str, ...]) -> Outcome:
    """``sea plan preview`` then ``sea plan approve``, as a person does: an approval approves
    what the preview showed."""
    assert sea("plan", "preview", plan_id, *options).code == 0
    return sea("plan", "approve", plan_id, *options)


def stored_bytes(sea: Sea) -> bytes:
    return b"".join(p.read_bytes() for p in (sea.root / "home").glob("memory.sqlite*"))


def test_an_argument_naming_a_path_outside_is_refused_through_the_cli(sea: Sea) -> None:
    target = "--junitxml=../outside/x"
    plan_id = planned(sea, [PYTHON, "-c", "import sys; open(sys.argv[1][11:], 'w').write('x')",
                            target])
    ws = ("--workspace", str(sea.root / "ws"), "--allow-run", PYTHON)
    approved = approve(sea, plan_id, ws)
    executed = sea("plan", "execute", plan_id, *ws)
    assert not (sea.root / "outside" / "x").exists()
    assert approved.code == 1, approved.out
    assert executed.code == 1
    shown = sea("plan", "show", plan_id, "--json")
    assert f"argument {target!r} names a path outside the workspace" in shown.out, shown.out


def test_the_host_environment_reaches_neither_the_command_nor_the_store(
    sea: Sea, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_API_KEY", SECRET_VALUE)
    monkeypatch.setenv("LANG", "C.UTF-8")
    plan_id = planned(sea, [PYTHON, "-c", "import os; print(sorted(os.environ.items()))"])
    ws = ("--workspace", str(sea.root / "ws"), "--allow-run", PYTHON)
    assert approve(sea, plan_id, ws).code == 0
    executed = sea("plan", "execute", plan_id, *ws, "--json")
    assert executed.code == 0, executed.err
    shown = sea("plan", "show", plan_id, "--json")
    (result,) = orjson.loads(shown.out)["state"]["results"]
    assert "('LANG', 'C.UTF-8')" in result["output"], result["output"]
    for text in (executed.out, executed.err, shown.out, result["output"]):
        assert SECRET_VALUE not in text and "SECRET_API_KEY" not in text
    assert SECRET_VALUE.encode() not in stored_bytes(sea)


def test_run_env_passes_a_named_variable_on(sea: Sea, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEA_TEST_SETTING", "on")
    monkeypatch.setenv("SECRET_API_KEY", SECRET_VALUE)
    plan_id = planned(sea, [PYTHON, "-c", "import os; print(sorted(os.environ))"])
    ws = ("--workspace", str(sea.root / "ws"), "--allow-run", PYTHON,
          "--run-env", "SEA_TEST_SETTING")
    assert approve(sea, plan_id, ws).code == 0
    assert sea("plan", "execute", plan_id, *ws).code == 0
    (result,) = orjson.loads(sea("plan", "show", plan_id, "--json").out)["state"]["results"]
    assert "'SEA_TEST_SETTING'" in result["output"] and "SECRET_API_KEY" not in result["output"]


def test_the_host_sandbox_is_put_in_front_of_the_command_through_the_cli(sea: Sea) -> None:
    record = sea.root / "wrapper.argv"
    wrapper = sea.root / "sandbox"
    wrapper.write_text(
        f"#!{PYTHON}\nimport os, sys\n"
        f"open({str(record)!r}, 'w').write(repr(sys.argv[1:]))\n"
        "os.execv(sys.argv[2], sys.argv[2:])\n")
    wrapper.chmod(0o755)
    plan_id = planned(sea, [PYTHON, "-c", "print('inside')"])
    ws = ("--workspace", str(sea.root / "ws"), "--allow-run", PYTHON,
          "--run-wrapper", f"{wrapper} --die-with-parent")
    assert approve(sea, plan_id, ws).code == 0
    executed = sea("plan", "execute", plan_id, *ws)
    assert executed.code == 0, executed.err
    assert record.read_text() == repr(["--die-with-parent", PYTHON, "-c", "print('inside')"])


@pytest.mark.parametrize(("option", "says"), [
    (("--run-env", "SEA_TEST_NOT_SET"), "--run-env SEA_TEST_NOT_SET: no such variable"),
    (("--allow-run", "./planted.sh"), "give a command name (looked up in run_path) or an "
                                      "absolute path"),
    (("--run-wrapper", "no-such-sandbox-here --"), "'no-such-sandbox-here' was not found in "
                                                  "run_path"),
])
def test_a_bad_run_option_is_a_usage_error_before_anything_runs(
    sea: Sea, monkeypatch: pytest.MonkeyPatch, option: tuple[str, ...], says: str
) -> None:
    monkeypatch.delenv("SEA_TEST_NOT_SET", raising=False)
    plan_id = planned(sea, [PYTHON, "-c", "open('ran', 'w')"])
    done = sea("plan", "execute", plan_id, "--workspace", str(sea.root / "ws"), *option)
    assert done.code == 2 and says in done.err, done.err
    assert not (sea.root / "ws" / "ran").exists()
