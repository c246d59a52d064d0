"""`sea run --record` and `sea replay`: a recorded pulse replays; an edited playbook diverges."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from sea.resources import bundled_playbooks_dir
from tests.trace.conftest import Sea


def record(sea: Sea) -> Path:
    trace = sea.root / "trace.json"
    done = sea("run", "--input", "Hello", "--model", sea.script(), "--record", str(trace))
    assert done.code == 0, done.err
    assert done.out.strip() == "Hello! I'm Aoi."
    return trace


def test_recorded_pulse_replays_and_matches(sea: Sea) -> None:
    trace = record(sea)
    data = orjson.loads(trace.read_bytes())
    assert data["playbook"] == "meta_user" and data["status"] == "ok"
    assert data["spoken"] == ["Hello! I'm Aoi."]
    ran = [f"{n['playbook']}.{n['node']}" for n in data["nodes"]]
    assert ran[0] == "meta_user.route" and "meta_user.speak" in ran
    assert "meta_user.run" not in ran
    # a greeting matches no playbook's examples: the router takes basic_chat, asking no model
    assert [(c["playbook"], c["node"]) for c in data["llm_calls"]] == [
        ("sub_speak", "compose"),
    ]
    assert [c["tool"] for c in data["tool_calls"]][:1] == ["rank_playbooks"]

    replayed = sea("replay", str(trace))
    assert replayed.code == 0, replayed.out + replayed.err
    assert replayed.out.startswith("replay matched:")
    assert "1 model call" in replayed.out


def edited_playbooks(root: Path) -> Path:
    """The bundled playbooks, with meta_user sending ``basic_chat`` to ``run``, not ``speak``."""
    copy = root / "playbooks"
    shutil.copytree(bundled_playbooks_dir(), copy)
    meta = copy / "meta_user.json"
    data = orjson.loads(meta.read_bytes())
    (check,) = [node for node in data["nodes"] if node["id"] == "check"]
    assert check["conditional_next"]["cases"] == {"basic_chat": "speak"}
    check["conditional_next"]["cases"] = {"basic_chat": "run"}
    meta.write_bytes(orjson.dumps(data))
    return copy


def test_replay_against_an_edited_playbook_reports_the_divergence(sea: Sea) -> None:
    trace = record(sea)
    playbooks = edited_playbooks(sea.root)

    replayed = sea("replay", str(trace), "--playbooks", str(playbooks), "--json")
    assert replayed.code == 1
    report = orjson.loads(replayed.out)
    assert report["matched"] is False
    assert report["divergence"] == {
        "playbook": "meta_user",
        "node": "speak",
        "field": "step",
        "expected": "node meta_user.speak",
        "actual": "node meta_user.run",
    }
    assert list(report["changed_playbooks"]) == ["meta_user"]

    text = sea("replay", str(trace), "--playbooks", str(playbooks))
    assert text.code == 1
    assert "note: playbook meta_user changed since the recording" in text.out
    assert "replay diverged at meta_user.speak: step" in text.out


def test_trace_keeps_the_user_playbook_dirs_and_replay_uses_them(
    sea: Sea, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = sea.root / "mine"
    shutil.copytree(bundled_playbooks_dir(), mine)
    monkeypatch.chdir(sea.root)
    trace = sea.root / "trace.json"
    done = sea("run", "--input", "Hello", "--model", sea.script(), "--playbooks", "mine",
               "--record", str(trace))
    assert done.code == 0, done.err
    assert orjson.loads(trace.read_bytes())["playbook_dirs"] == [str(mine.resolve())]

    monkeypatch.chdir(sea.root / "home")  # the recorded path does not depend on the cwd
    assert sea("replay", str(trace)).code == 0
    edited = edited_playbooks(sea.root / "edited")
    (mine / "meta_user.json").write_bytes((edited / "meta_user.json").read_bytes())
    diverged = sea("replay", str(trace))
    assert diverged.code == 1
    assert "replay diverged at meta_user.speak: step" in diverged.out


def test_a_recorded_playbook_dir_that_is_gone_is_noted(sea: Sea) -> None:
    trace = record(sea)
    data = orjson.loads(trace.read_bytes())
    data["playbook_dirs"] = [str(sea.root / "gone")]
    trace.write_bytes(orjson.dumps(data))
    replayed = sea("replay", str(trace))
    assert replayed.code == 0
    assert f"the recorded playbook directory {sea.root / 'gone'} does not exist" in replayed.err


def test_replay_names_why_the_replayed_pulse_failed(sea: Sea) -> None:
    trace = record(sea)
    data = orjson.loads(trace.read_bytes())
    data["playbook"] = "no_such_playbook"
    trace.write_bytes(orjson.dumps(data))
    replayed = sea("replay", str(trace))
    assert replayed.code == 1
    assert "replay diverged at meta_user.route: step" in replayed.out
    assert "the replayed pulse failed: SEA050 no playbook named `no_such_playbook`" in replayed.out


def test_replay_playbooks_option_must_name_a_directory(sea: Sea) -> None:
    trace = record(sea)
    replayed = sea("replay", str(trace), "--playbooks", str(sea.root / "absent"))
    assert replayed.code == 2
    assert "--playbooks" in replayed.err and "not a directory" in replayed.err


GREETED = {
    "responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "a statement"}],
        "sub_speak.compose": ["What a nice cat."],
    }
}
RESEARCHED = {
    "responses": {
        "sub_router_user.decide": [
            {"playbook": "memory_research", "args": {"query": "cat"}, "reason": "asks"},
        ],
        "memory_research.plan": [{"queries": ["cat", "Tama"]}],
        "memory_research.summarize": ["The user has a cat named Tama."],
        "sub_speak.compose": ["Your cat is Tama."],
    }
}


def test_a_pulse_whose_tool_results_pass_through_expressions_replays(sea: Sea) -> None:
    first = sea("run", "--input", "My cat Tama sleeps in boxes.", "--model", sea.script(GREETED))
    assert first.code == 0, first.err
    trace = sea.root / "trace.json"
    done = sea("run", "--input", "What do you know about my cat Tama?",
               "--model", sea.script(RESEARCHED), "--record", str(trace))
    assert done.code == 0, done.err
    searched = [c for c in orjson.loads(trace.read_bytes())["tool_calls"]
                if c["tool"] == "memory_search"]
    assert [c["args"]["query"] for c in searched] == ["cat", "Tama"]
    assert all(c["result"] for c in searched)

    for _ in range(3):
        replayed = sea("replay", str(trace))
        assert replayed.code == 0, replayed.out + replayed.err
        assert replayed.out.startswith("replay matched:")
