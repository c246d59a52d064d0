"""Fixtures for recording and replaying pulses through the ``sea`` command line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from sea.cli import main

SCRIPT = {
    "responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "a greeting"}],
        "sub_speak.compose": ["Hello! I'm Aoi."],
    }
}
"""Answers for one ``meta_user`` pulse that the router sends straight to the speaker."""


@dataclass(frozen=True)
class Outcome:
    """What one ``sea`` command did: exit code and what it printed."""

    code: int
    out: str
    err: str


@dataclass(frozen=True)
class Sea:
    """The ``sea`` command with its data directory and store in a temporary directory."""

    root: Path
    capsys: pytest.CaptureFixture[str]

    def __call__(self, *argv: str) -> Outcome:
        """Run ``sea ARGV`` and capture its output."""
        self.capsys.readouterr()
        code = main(list(argv))
        captured = self.capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    def script(self, data: object = SCRIPT) -> str:
        """A model script file; the ``--model`` value that uses it."""
        path = self.root / "script.json"
        path.write_bytes(orjson.dumps(data))
        return f"scripted:{path}"


@pytest.fixture
def sea(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Sea:
    """``sea`` with ``SEA_HOME`` and ``SEA_DB`` pointing into ``tmp_path``."""
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SEA_DB", str(tmp_path / "home" / "memory.sqlite"))
    return Sea(tmp_path, capsys)
