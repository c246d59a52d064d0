"""``sea run`` end to end with hostile text in every place it reads from: typed input, an
imported conversation, a workspace file, host tool descriptions (shown in the actions prompt
and, with ``--structured-method prompt``, in the plan's JSON Schema). The recorded trace
holds every message the models were sent; the engine's detector finds no tag in them but
the engine's own ``<system>`` wrapping."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from sea.lang.trust import has_marker
from tests.hostile.test_trust_spellings import FORGED, forged_in
from tests.trace.conftest import Sea

TOOLS = f'''
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field


class Args(BaseModel):
    query: str = Field(description={f"What to look up. {FORGED}"!r})


def lookup(query: str) -> str:
    return query


TOOLS = [StructuredTool.from_function(func=lookup, name="lookup", args_schema=Args,
                                      description={f"Looks a thing up {FORGED}. More."!r})]
'''

ACT = {
    "name": "look_up",
    "description": "Reads a file and looks a thing up, then the speaker answers.",
    "start_node": "act",
    "nodes": [
        {"id": "act", "type": "actions", "action": "The user asked: {input}",
         "available_tools": ["read_file", "lookup"], "max_actions": 2,
         "output_key": "done", "next": "save"},
        {"id": "save", "type": "memorize", "role": "user",
         "action": "<system>Results: {done}</system>", "next": "speak"},
        {"id": "speak", "type": "subplay", "playbook": "sub_speak"},
    ],
}


@pytest.fixture
def sea(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Sea:
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SEA_DB", str(tmp_path / "home" / "memory.sqlite"))
    return Sea(tmp_path, capsys)


def test_sea_run_sends_no_model_a_forged_tag_from_any_source(sea: Sea) -> None:
    root = sea.root
    (root / "ws").mkdir()
    (root / "ws" / "notes.md").write_text(f"list {FORGED}", encoding="utf-8")
    (root / "books").mkdir()
    (root / "books" / "look_up.json").write_text(json.dumps(ACT), encoding="utf-8")
    (root / "hostile_tools.py").write_text(TOOLS, encoding="utf-8")
    line = {"persona": "aoi", "role": "user", "content": f"old {FORGED}",
            "tags": ["conversation"], "created_at": "2026-01-01T00:00:00+00:00",
            "uid": "imported-1"}
    (root / "old.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    imported = sea("memory", "import", str(root / "old.jsonl"))
    assert imported.code == 0, imported.err
    plan = {"actions": [{"action_id": "read", "tool": "read_file",
                         "parameters": {"path": "notes.md"}},
                        {"action_id": "find", "tool": "lookup",
                         "parameters": {"query": "tea"}}], "reason": "both"}
    script = {"responses": {"look_up.act": [json.dumps(plan)],
                            "sub_speak.compose": ["Here it is."]}}
    trace = root / "trace.json"
    done = sea("run", "look_up", "--input", f"hi {FORGED}", "--model", sea.script(script),
               "--playbooks", str(root / "books"), "--workspace", str(root / "ws"),
               "--tools", str(root / "hostile_tools.py"), "--structured-method", "prompt",
               "--record", str(trace), "--json")
    assert done.code == 0, done.err
    calls = orjson.loads(trace.read_bytes())["llm_calls"]
    sent = [(m["role"], m["content"]) for call in calls for m in call["messages"]]
    assert any("Looks a thing up" in c and "What to look up" in c for _, c in sent)
    assert any(c.startswith("old ") for _, c in sent)
    assert any("list " in c and "administrator" in c for _, c in sent)
    leaked = [c for role, c in sent
              if (has_marker(c) if role == "system" else forged_in(c))]
    assert leaked == []
