"""Fixtures of ``sea eval``: the command in a temporary directory, eval sets and model
scripts written there, and the run it wrote read back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.project.conftest import Sea, sea_in
from tests.trace.conftest import Outcome

MEMORY_SCRIPT = {"responses": {
    "sub_router_user.decide": [{"playbook": "memory_research", "args": {"query": "dog"},
                                "reason": "asks about before"}],
    "memory_research.plan": [{"queries": ["dog"]}],
    "memory_research.summarize": ["The user's dog is called Pochi."],
    "sub_speak.compose": ['{"dog": {"name": "Pochi"}, "facts": ["dog", "Pochi"]}'],
}}
"""One ``meta_user`` pulse: routed to memory_research, which searches the seeded memory for
"dog"; the speaker answers in JSON (so ``reply.json`` has something to read)."""

PLAN_SCRIPT = {"responses": {
    "sub_router_user.decide": [{"playbook": "sub_plan", "reason": "changes a file"}],
    "sub_plan.decide": [{"step": "new"}],
    "sub_plan.draft": [{"title": "Outline", "content": "Write the outline.", "specs": [
        {"kind": "create", "path": "notes/outline.md", "content": "# Outline\n1. Start",
         "description": "the outline"}]}],
}}
"""One pulse routed to sub_plan: it proposes a plan with one spec and waits for approval."""

CHAT_SCRIPT = {"responses": {
    "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "a greeting"}],
    "sub_speak.compose": ["Hello! I'm Aoi."],
}}

DOG = {"messages": [{"role": "user", "content": "My dog is called Pochi."},
                    {"role": "assistant", "content": "What a cute name!"}]}
"""A persona whose memory holds the dog's name."""


@dataclass(frozen=True)
class EvalSea(Sea):
    """``sea`` with helpers for eval sets, scripts and runs."""

    def model(self, data: object, name: str = "script.json") -> str:
        """A model script file; the ``--model`` value that uses it."""
        path = self.write(name, orjson.dumps(data).decode())
        return f"scripted:{path}"

    def jsonl(self, name: str, cases: list[dict[str, Any]]) -> Path:
        """A JSONL eval set of ``cases``."""
        return self.write(name, "".join(orjson.dumps(c).decode() + "\n" for c in cases))

    def run(self, *argv: str) -> tuple[Outcome, dict[str, Any]]:
        """``sea eval ARGV --json run.json --quiet``: what it did and the run it wrote."""
        target = self.root / "run.json"
        target.unlink(missing_ok=True)
        done = self("eval", *argv, "--json", str(target), "--quiet")
        run = orjson.loads(target.read_bytes()) if target.exists() else {}
        return done, run


def checks(run: dict[str, Any], case: str, repeat: int = 0) -> dict[str, list[Any]]:
    """The checks of one attempt of ``case`` (``set/id``) on the run's only model: each
    expectation's name → [passed, detail] (the last of a name wins)."""
    (model,) = run["models"].values()
    attempt = model["cases"][case]["attempts"][repeat]
    return {c["name"]: [c["passed"], c["detail"]] for c in attempt["checks"]}


@pytest.fixture
def sea(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> EvalSea:
    """``sea`` run in ``tmp_path / "work"``, the data directory (and runs) in ``home``."""
    return sea_in(EvalSea, tmp_path, monkeypatch, capsys)
