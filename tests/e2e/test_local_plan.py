"""The bundled local model proposes a plan through ``sub_plan`` (needs the `local` extra):
its draft, constrained to the playbook's schema, becomes a stored plan; the person refuses
(``--deny``), so nothing is written."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from saimemory.sqlite import SQLiteStore
from sea.cli import main
from tests.e2e.conftest import LOCAL_MODEL

pytestmark = LOCAL_MODEL


def test_smollm2_proposes_a_plan_that_is_stored_and_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    db = tmp_path / "memory.sqlite"
    code = main(["run", "sub_plan", "--input", "Write the outline of my game into notes/outline.md",
                 "--workspace", str(workspace), "--db", str(db), "--deny", "--json"])
    assert code == 0
    result = orjson.loads(capsys.readouterr().out)
    assert result["status"] == "ok", result["error"]
    events = [e["event"] for e in result["plan_events"]]
    assert events[0] == "plan_proposed"
    assert {c["model"] for c in result["llm_calls"]} == {"smollm2-135m-instruct"}
    store = SQLiteStore(db)
    try:
        (plan,) = store.list_plans("aoi")
    finally:
        store.close()
    assert plan.title.strip() and plan.state.history[0].kind == "plan_proposed"
    assert plan.state.status in ("proposed", "pending_review")  # refused, or specs invalid
    assert list(workspace.iterdir()) == []  # nothing approved: nothing written
