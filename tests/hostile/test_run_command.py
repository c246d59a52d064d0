"""A plan's ``run`` spec runs with the workspace as its only writable place, as far as SEA can
see: arguments that name paths outside the workspace are refused (when the specs are set and
again right before the command starts), the child's environment is the host's allow-list
(never the host's own, API keys and all), allow-listed names are looked up once, when the
policy is built, the child runs in a process group of its own that is killed whole at its
timeout, its output is read a piece at a time and kept up to the policy's cap, and a host's
sandbox (``PlanPolicy.run_wrapper``) is put in front of every command.

Before: ``--junitxml=../x``, ``-C ../x``, ``/abs`` and ``~`` arguments ran; the child
inherited every variable of the host's environment (a fake ``SECRET_API_KEY`` came back in
the stored result); a ``PATH`` changed after start-up chose another binary; a grandchild
outlived the timeout; the whole output was held in memory before it was cut.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from saimemory.base import MessageStore
from sea.engine.plans import PlanPolicy, PlanService

SECRET_VALUE = "sk-fake-0123456789-do-not-leak"
PYTHON = sys.executable


def python_line(code: str, *extra: str) -> str:
    return shlex.join([PYTHON, "-c", code, *extra])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("TOPSECRET\n")
    return folder


def service(store: MessageStore, workspace: Path, **policy: object) -> PlanService:
    settings: dict[str, object] = {"run_allowlist": frozenset({PYTHON}), "run_timeout_s": 10}
    settings.update(policy)
    return PlanService(store, "aoi", workspace, PlanPolicy(**settings))  # type: ignore[arg-type]


def approved(plans: PlanService, content: str, path: str = ".") -> str:
    plan_id = plans.propose("t", "c").plan_id
    report = plans.set_action_specs(plan_id, [{"kind": "run", "path": path,
                                               "content": content}])
    assert report.ok, report.issues
    plans.request_approval(plan_id, {"all": True})
    plans.approve(plan_id, "ken", {"all": True})
    return plan_id


WRITE_ARG = "import sys; open(sys.argv[1], 'w').write('pwned')"


# -- arguments -----------------------------------------------------------------------------------


@pytest.mark.parametrize("words", [
    ["--junitxml=../outside/x"],
    ["-C", "../outside"],
    ["-C../outside"],
    ["DESTDIR=../outside"],
    ["sub/../../outside/x"],
    ["{outside}/x"],
    ["--out={outside}/x"],
    ["~/x"],
    ["~"],
    ["--config=~root/.x"],
    [".."],
])
def test_arguments_naming_paths_outside_the_workspace_are_refused(
    store: MessageStore, workspace: Path, outside: Path, words: list[str]
) -> None:
    plans = service(store, workspace)
    plan_id = plans.propose("t", "c").plan_id
    argv = [w.format(outside=outside) for w in words]
    report = plans.set_action_specs(plan_id, [
        {"kind": "run", "content": python_line(WRITE_ARG, *argv)}])
    assert not report.ok
    (issue,) = report.issues
    assert "outside the workspace" in issue and repr(argv[-1]) in issue, issue
    assert not (outside / "x").exists()


def test_arguments_naming_paths_inside_the_workspace_run(
    store: MessageStore, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    plans = service(store, workspace)
    code = "import sys; [open(p, 'w').write('ok') for p in sys.argv[1:]]"
    plan_id = approved(plans, python_line(code, "a.txt", "./b.txt", "../c.txt",
                                          f"{workspace}/d.txt"), "sub")
    result = plans.execute(plan_id)
    assert result.overall_success, result.results
    assert sorted(p.name for p in workspace.rglob("*.txt")) == [
        "a.txt", "b.txt", "c.txt", "d.txt"]


def test_a_folder_swapped_for_a_link_out_after_approval_is_refused_when_it_runs(
    store: MessageStore, workspace: Path, outside: Path
) -> None:
    (workspace / "out").mkdir()
    plans = service(store, workspace)
    plan_id = approved(plans, python_line(WRITE_ARG, "out/x"))
    (workspace / "out").rmdir()
    (workspace / "out").symlink_to(outside, target_is_directory=True)
    result = plans.execute(plan_id)
    assert not result.overall_success
    assert not (outside / "x").exists()
    assert "argument 'out/x' names a path outside the workspace" in str(result.conflicts)


def test_the_runner_checks_the_arguments_again_right_before_the_command_starts(
    workspace: Path, outside: Path
) -> None:
    from datetime import UTC, datetime

    from saimemory.plans import ActionSpec, ActionSpecExt
    from sea.engine.plans.runner import run_spec
    from sea.engine.tools.workspace import Workspace

    (workspace / "out").symlink_to(outside, target_is_directory=True)
    spec = ActionSpecExt("1", ActionSpec(kind="run", path=".",
                                         content=python_line(WRITE_ARG, "out/x")))
    policy = PlanPolicy(run_allowlist=frozenset({PYTHON}))
    result = run_spec(Workspace(workspace), policy, spec, lambda: datetime.now(UTC))
    assert not result.ok and not (outside / "x").exists()
    assert "argument 'out/x' names a path outside the workspace" in result.message


# -- environment ---------------------------------------------------------------------------------


def test_the_child_never_sees_the_host_environment(
    store: MessageStore, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_API_KEY", SECRET_VALUE)
    plans = service(store, workspace, run_env={"LANG": "C.UTF-8"})
    plan_id = approved(plans, python_line("import os; print(dict(os.environ))"))
    result = plans.execute(plan_id)
    assert result.overall_success, result.results
    output = result.results[0].output or ""
    assert "'LANG': 'C.UTF-8'" in output, output
    assert SECRET_VALUE not in output and "SECRET_API_KEY" not in output
    store.close()
    for stored in tmp_path.glob("memory.db*"):
        assert SECRET_VALUE.encode() not in stored.read_bytes(), stored


# -- PATH ----------------------------------------------------------------------------------------


def _program(folder: Path, name: str, says: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho {says}\n")
    path.chmod(0o755)
    return path


def test_allow_listed_names_are_looked_up_once_when_the_policy_is_built(
    store: MessageStore, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(tmp_path / "bin", "greet", "the-real-one")
    plans = service(store, workspace, run_allowlist=frozenset({"greet"}),
                    run_path=f"relative{os.pathsep}{tmp_path / 'bin'}")
    assert plans.policy.run_commands == {"greet": str(tmp_path / "bin" / "greet")}
    plan_id = approved(plans, "greet")
    _program(workspace, "greet", "planted-in-the-workspace")
    _program(tmp_path / "other", "greet", "planted-on-the-path")
    monkeypatch.setenv("PATH", f"{workspace}{os.pathsep}{tmp_path / 'other'}")
    monkeypatch.chdir(workspace)
    result = plans.execute(plan_id)
    assert result.overall_success, result.results
    assert result.results[0].output == "the-real-one\n"


def test_an_allow_listed_name_not_found_is_refused_clearly(
    store: MessageStore, workspace: Path, tmp_path: Path
) -> None:
    plans = service(store, workspace, run_allowlist=frozenset({"greet"}),
                    run_path=str(tmp_path / "empty"))
    plan_id = plans.propose("t", "c").plan_id
    report = plans.set_action_specs(plan_id, [{"kind": "run", "content": "greet"}])
    assert not report.ok
    assert "'greet' is on the host's allow-list but was not found" in report.issues[0]


# -- process group and timeout -------------------------------------------------------------------


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie waiting for its reaper has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_grandchild_is_killed_with_its_group_at_the_timeout(
    store: MessageStore, workspace: Path
) -> None:
    code = ("import subprocess, sys, time; "
            "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
            "open('grandchild.pid', 'w').write(str(g.pid)); print('started', flush=True); "
            "time.sleep(60)")
    plans = service(store, workspace, run_timeout_s=2)
    result = plans.execute(approved(plans, python_line(code)))
    assert not result.overall_success
    assert "timed out after 2s" in result.results[0].message
    assert "started" in result.results[0].message
    pid = int((workspace / "grandchild.pid").read_text())
    for _ in range(200):  # the kill is sent; the kernel ends it soon after
        if _gone(pid):
            break
        time.sleep(0.05)
    assert _gone(pid), f"grandchild {pid} outlived the timeout"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_grandchild_holding_the_output_open_does_not_keep_the_run_going(
    store: MessageStore, workspace: Path
) -> None:
    code = ("import subprocess, sys; "
            "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            "open('grandchild.pid', 'w').write(str(g.pid)); print('parent done')")
    plans = service(store, workspace, run_timeout_s=30)
    result = plans.execute(approved(plans, python_line(code)))
    assert result.overall_success, result.results
    assert result.results[0].output == "parent done\n"
    pid = int((workspace / "grandchild.pid").read_text())
    for _ in range(200):
        if _gone(pid):
            break
        time.sleep(0.05)
    assert _gone(pid), f"grandchild {pid} outlived the command"


def test_a_command_that_closes_its_output_early_is_waited_for(
    store: MessageStore, workspace: Path
) -> None:
    code = ("import os, time; print('closing', flush=True); os.close(1); os.close(2); "
            "time.sleep(0.3); open('done', 'w').write('yes')")
    plans = service(store, workspace)
    result = plans.execute(approved(plans, python_line(code)))
    assert result.overall_success, result.results
    assert result.results[0].output == "closing\n"
    assert (workspace / "done").read_text() == "yes"


# -- output --------------------------------------------------------------------------------------


def test_output_past_the_cap_is_cut_with_a_marker_and_never_held_whole(
    store: MessageStore, workspace: Path
) -> None:
    code = ("import sys; block = 'é' * 65536\n"
            "for _ in range(400): sys.stdout.write(block)")  # 26 M characters, 52 MB
    plans = service(store, workspace, max_output_chars=1000)
    plan_id = approved(plans, python_line(code))
    tracemalloc.start()
    try:
        result = plans.execute(plan_id)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.overall_success, result.results
    output = result.results[0].output or ""
    assert output.startswith("é" * 1000 + "\n… (cut at 1000 of 26214400 characters)"), \
        output[990:1100]
    assert peak < 8 * 1024 * 1024, f"{peak} bytes held at the peak"


# -- the host's sandbox --------------------------------------------------------------------------


def test_the_host_sandbox_wrapper_is_put_in_front_of_the_command(
    store: MessageStore, workspace: Path, tmp_path: Path
) -> None:
    record = tmp_path / "wrapper.argv"
    wrapper = tmp_path / "sandbox"
    wrapper.write_text(
        f"#!{PYTHON}\nimport os, sys\n"
        f"open({str(record)!r}, 'w').write(repr(sys.argv[1:]))\n"
        "os.execv(sys.argv[2], sys.argv[2:])\n")
    wrapper.chmod(0o755)
    plans = service(store, workspace, run_wrapper=(str(wrapper), "--die-with-parent"))
    result = plans.execute(approved(plans, python_line("print('inside')")))
    assert result.overall_success, result.results
    assert result.results[0].output == "inside\n"
    assert record.read_text() == repr(["--die-with-parent", PYTHON, "-c", "print('inside')"])
