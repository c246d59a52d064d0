"""Fixtures for the project file: ``sea`` run in a temporary directory, with no ``SEA_*``
setting from the environment of the test run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest

from sea.cli._project.load import PROJECT_ENV
from sea.cli._project.settings import SETTINGS
from tests.trace.conftest import Sea as TraceSea

SCRIPT = {
    "responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "a greeting"}],
        "sub_speak.compose": ["Hello from the project!"],
    }
}
"""Answers for one pulse of ``sea init``'s first playbook (the router picks basic_chat)."""


def clean_environment(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """No ``SEA_*`` setting, no named project; the data directory in ``home``."""
    for setting in SETTINGS:
        if setting.env is not None:
            monkeypatch.delenv(setting.env, raising=False)
    monkeypatch.delenv(PROJECT_ENV, raising=False)
    monkeypatch.setenv("SEA_HOME", str(home))


@dataclass(frozen=True)
class Sea(TraceSea):
    """``sea`` in the current directory (``root``, unless the test changes it)."""

    def config(self, *argv: str) -> dict[str, Any]:
        """``sea config --json ARGV``: the resolved settings."""
        done = self("config", "--json", *argv)
        assert done.code == 0, done.err
        result: dict[str, Any] = orjson.loads(done.out)
        return result

    def setting(self, key: str, *argv: str) -> tuple[Any, str]:
        """One setting's value and source, as ``sea config --json ARGV`` shows it."""
        found = self.config(*argv)["settings"][key]
        return found["value"], found["source"]

    def write(self, name: str, text: str) -> Path:
        """A file under ``root``."""
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path


S = TypeVar("S", bound=Sea)


def sea_in(kind: type[S], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           capsys: pytest.CaptureFixture[str]) -> S:
    """A ``kind`` of ``sea`` run in ``tmp_path / "work"`` (the current directory), the data
    directory in ``tmp_path / "home"``, no ``SEA_*`` setting from the shell."""
    root = tmp_path / "work"
    root.mkdir()
    clean_environment(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(root)
    return kind(root, capsys)


@pytest.fixture
def sea(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> Sea:
    """``sea`` run in ``tmp_path / "work"``, the data directory in ``tmp_path / "home"``."""
    return sea_in(Sea, tmp_path, monkeypatch, capsys)
