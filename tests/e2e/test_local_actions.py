"""The bundled local model plans an action pipeline for ``sub_act`` under the grammar
constraint; the pulse is recorded and replays (needs the `local` extra)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from sea.cli import main
from tests.e2e.conftest import LOCAL_MODEL

pytestmark = LOCAL_MODEL

OFFERED = {"list_files", "read_file", "search_files", "memory_search"}


def test_smollm2_plans_a_valid_pipeline_that_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "game_doc.md").write_text(
        "# Star Garden\nA farming game on a space station.\n", encoding="utf-8")
    trace = tmp_path / "pulse.json"
    code = main(["run", "sub_act", "--input", "Read game_doc.md and tell me what it is about",
                 "--workspace", str(workspace), "--db", str(tmp_path / "memory.sqlite"),
                 "--record", str(trace), "--events", "jsonl"])
    assert code == 0
    events = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[-1]["status"] == "ok", events[-1]
    (call,) = [e["record"] for e in events if e["kind"] == "llm_call"]
    assert call["model"] == "smollm2-135m-instruct" and call["outcome"] == "ok"
    (planned,) = [e for e in events if e["kind"] == "actions_planned"]
    assert set(planned["catalogue"]) == OFFERED
    ids = [a["action_id"] for a in planned["actions"]]
    assert len(ids) == len(set(ids)) <= 4
    for index, action in enumerate(planned["actions"]):
        assert action["tool"] in OFFERED  # the grammar allows no other tool
        for value in action["parameters"].values():
            if isinstance(value, str) and value.startswith("ref:"):
                assert value[4:] in ids[:index]  # refs name earlier actions only
    ended = [e for e in events if e["kind"] == "action_end"]
    assert [e["action_id"] for e in ended] == ids
    memo = [e for e in events if e["kind"] == "memory_write" and e["playbook"] == "sub_act"]
    assert len(memo) == 1 and memo[0]["content"].startswith("<system>")

    assert main(["replay", str(trace)]) == 0
    assert capsys.readouterr().out.startswith("replay matched")
