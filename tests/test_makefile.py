"""``make demo`` says what it does while the local model's runtime compiles, and installs the
package only when pyproject.toml changed (read from ``make -n``: nothing is run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def dry_run(target: str, venv: Path, wheels: Path) -> str:
    done = subprocess.run(["make", "-n", target, f"VENV={venv}", f"LLAMA_WHEELS={wheels}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").symlink_to(sys.executable)
    return tmp_path / "venv"


def test_the_runtime_s_build_is_announced_with_how_long_it_takes(venv: Path,
                                                                  tmp_path: Path) -> None:
    commands = dry_run("demo", venv, tmp_path / "no-wheels")
    announce = commands.index("Building the local model's runtime")
    assert "minutes" in commands[announce:commands.index("pip wheel")]


def test_a_second_make_demo_installs_nothing(venv: Path, tmp_path: Path) -> None:
    assert "pip install" in dry_run("demo", venv, tmp_path)  # the first one installs
    (venv / ".installed-local").touch()  # as the first one leaves it
    second = dry_run("demo", venv, tmp_path)
    assert "pip install" not in second and "sea run" in second
    later = (ROOT / "pyproject.toml").stat().st_mtime + 10
    os.utime(venv / ".installed-local", (later, later))
    assert "pip install" not in dry_run("demo", venv, tmp_path)
    os.utime(venv / ".installed-local", (later - 3600, later - 3600))  # pyproject changed
    assert "pip install" in dry_run("demo", venv, tmp_path)
