"""The console entry (the ``sea`` script, ``python -m sea``): the exit code of the command,
the garbage collector's pace, and a shutdown that does not collect what was left alive."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sea.cli import YOUNG_COLLECTION_PACE

ROOT = Path(__file__).resolve().parents[2]
ENV = {"PYTHONPATH": str(ROOT), "PATH": ""}


def _sea(*words: str) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "SEA_CACHE_DIR": os.environ["SEA_CACHE_DIR"]}
    return subprocess.run([sys.executable, "-m", "sea", *words], capture_output=True,
                          text=True, cwd=ROOT, env=env)


def test_the_exit_code_is_the_command_s(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "bad"}')
    assert _sea("validate", "--no-cache", "playbooks").returncode == 0
    done = _sea("validate", "--no-cache", str(bad))
    assert done.returncode == 1
    assert "SEA" in done.stdout
    assert _sea("validate", "--no-such-option").returncode == 2


def test_a_verdict_is_kept_by_a_process_that_ends_frozen(tmp_path: Path) -> None:
    env = {**ENV, "SEA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "sea", "validate", "playbooks"],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode == 0
    assert len(list((tmp_path / "validate").glob("*.json"))) == 1


def test_a_sea_process_collects_young_objects_rarely_and_ends_frozen() -> None:
    script = (
        "import atexit, gc\n"
        "atexit.register(lambda: print(gc.get_threshold()[0], gc.get_freeze_count() > 0))\n"
        "import sys\n"
        "sys.argv = ['sea', 'validate', '--no-cache', 'playbooks']\n"
        "from sea.cli import console\n"
        "console()\n"
    )
    env = {**ENV, "SEA_CACHE_DIR": os.environ["SEA_CACHE_DIR"]}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env=env)
    assert done.returncode == 0
    assert done.stdout.strip().splitlines()[-1] == f"{YOUNG_COLLECTION_PACE} True"
