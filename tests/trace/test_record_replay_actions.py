"""Recording and replaying action pipelines: a trace keeps each plan, each action with its
``ref:`` normalizations and the offered tools' schemas; a replay reproduces the pipeline
exactly, and a divergence names the action and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from sea.engine.actions.prompt import first_sentence
from sea.engine.tools.signatures import ARGUMENTS
from sea.jsontypes import json_text
from sea.resources import schemas_dir
from sea.trace.format import TRACE_SCHEMA_FILE
from sea.trace.replay import load_trace
from tests.trace.conftest import Sea

TASK = "Find what the user said about: {input}"

NOTE = {
    "name": "note",
    "description": "Stores what the user said, without a model.",
    "start_node": "save",
    "nodes": [
        {"id": "save", "type": "memorize", "role": "assistant", "action": "Noted: {input}"},
    ],
}
"""An earlier pulse, without a model: its input and its note are in memory for the tools."""


def recall(task: str = TASK) -> dict[str, Any]:
    """A pipeline over the memory tools, then a plain tool node calling memory_search."""
    return {
        "name": "recall",
        "description": "Looks through memory with a planned pipeline.",
        "start_node": "act",
        "nodes": [
            {"id": "act", "type": "actions", "action": task,
             "available_tools": ["memory_recent", "memory_search"], "max_actions": 3,
             "output_key": "outcomes", "next": "lookup"},
            {"id": "lookup", "type": "tool", "action": "memory_search",
             "args": {"query": "Tama"}, "output_key": "found"},
        ],
    }


def plan(*actions: tuple[str, str, dict[str, Any]], reason: str = "to find it") -> dict[str, Any]:
    return {"actions": [{"action_id": a, "tool": t, "parameters": p} for a, t, p in actions],
            "reason": reason}


RECENT = ("recent", "memory_recent", {"limit": 2})
SEARCH = ("search", "memory_search", {"query": "ref:recent"})


def playbooks(root: Path, task: str = TASK) -> Path:
    books = root / "books"
    books.mkdir(exist_ok=True)
    (books / "note.json").write_bytes(orjson.dumps(NOTE))
    (books / "recall.json").write_bytes(orjson.dumps(recall(task)))
    return books


def record(sea: Sea, *actions: tuple[str, str, dict[str, Any]]) -> tuple[Path, dict[str, Any]]:
    """Store a message, then record a ``recall`` pulse whose model plans ``actions``."""
    books = playbooks(sea.root)
    noted = sea("run", "note", "--playbooks", str(books), "--input", "My cat Tama sleeps in boxes.",
                "--model", sea.script({"responses": {}}))
    assert noted.code == 0, noted.err
    trace = sea.root / "trace.json"
    script = sea.script({"responses": {"recall.act": [plan(*actions)]}})
    done = sea("run", "recall", "--playbooks", str(books), "--input", "my cat", "--model", script,
               "--record", str(trace))
    assert done.code == 0, done.err
    return trace, orjson.loads(trace.read_bytes())


def test_a_recorded_pipeline_keeps_its_plan_actions_normalizations_and_tools(sea: Sea) -> None:
    trace, data = record(sea, RECENT, SEARCH)
    assert data["status"] == "ok"
    assert data["version"] == 1

    (planned,) = data["plans"]
    assert (planned["playbook"], planned["node"]) == ("recall", "act")
    assert planned["actions"] == plan(RECENT, SEARCH)["actions"]
    assert planned["reason"] == "to find it"
    assert planned["offered"] == ["memory_recent", "memory_search"]

    recent_call, search_call, lookup_call = data["tool_calls"]
    assert [c["action_id"] for c in data["tool_calls"]] == ["recent", "search", None]
    assert recent_call["ok"] and recent_call["result"], "the store holds the noted message"
    assert [m["content"] for m in recent_call["result"]] == [
        "My cat Tama sleeps in boxes.", "Noted: My cat Tama sleeps in boxes."
    ]
    assert lookup_call["node"] == "lookup" and lookup_call["args"] == {"query": "Tama"}

    recent, search = data["actions"]
    assert recent == {
        "seq": recent["seq"], "playbook": "recall", "node": "act", "action_id": "recent",
        "tool": "memory_recent", "parameters": {"limit": 2}, "arguments": {"limit": 2},
        "normalized": [], "status": "ok", "error": None,
    }
    # a string parameter receives a list result as its JSON text
    assert search["parameters"] == {"query": "ref:recent"}
    assert search["arguments"] == {"query": json_text(recent_call["result"])}
    assert search_call["args"] == search["arguments"]
    assert search["normalized"] == [{
        "parameter": "query", "ref": "recent", "rule": "string.json", "from_type": "array",
        "to_type": "string", "detail": None,
    }]
    assert search["status"] == "ok" and search["error"] is None
    seqs = [planned["seq"], recent["seq"], recent_call["seq"], search["seq"], search_call["seq"]]
    assert seqs == sorted(seqs)

    assert set(data["tools"]) == {"memory_recent", "memory_search"}
    for name, tool in data["tools"].items():
        assert tool["description"]
        assert first_sentence(tool["description"]) in planned_prompt(data)
        assert tool["parameters"]["properties"] == (
            ARGUMENTS[name].model_json_schema()["properties"]
        )

    schema = orjson.loads((schemas_dir() / TRACE_SCHEMA_FILE).read_bytes())
    assert list(Draft202012Validator(schema).iter_errors(data)) == []

    replayed = sea("replay", str(trace))
    assert replayed.code == 0, replayed.out + replayed.err
    assert replayed.out.startswith("replay matched: 2 nodes, 1 model calls, 3 tool calls")


def planned_prompt(data: dict[str, Any]) -> str:
    """The text of the planning call's instruction (the message that lists the tools)."""
    (call,) = data["llm_calls"]
    (prompt,) = [m["content"] for m in call["messages"] if "Tools you may use" in m["content"]]
    return str(prompt)


def prompt_index(data: dict[str, Any]) -> int:
    messages = data["llm_calls"][0]["messages"]
    return next(i for i, m in enumerate(messages) if "Tools you may use" in m["content"])


def test_replay_against_an_edited_task_diverges_at_the_planning_call(sea: Sea) -> None:
    trace, data = record(sea, RECENT, SEARCH)
    playbooks(sea.root, task="Find what the user said about cats: {input}")

    replayed = sea("replay", str(trace), "--json")
    assert replayed.code == 1
    report = orjson.loads(replayed.out)
    divergence = report["divergence"]
    assert (divergence["playbook"], divergence["node"]) == ("recall", "act")
    assert divergence["field"] == f"llm.messages[{prompt_index(data)}].content"
    assert "said about: my cat" in divergence["expected"]
    assert "said about cats: my cat" in divergence["actual"]
    assert "action" not in divergence
    assert list(report["changed_playbooks"]) == ["recall"]


def _limit_query(data: dict[str, Any]) -> None:
    data["tools"]["memory_search"]["parameters"]["properties"]["query"]["maxLength"] = 40


def _fail_recent(data: dict[str, Any]) -> None:
    (call,) = [c for c in data["tool_calls"] if c["action_id"] == "recent"]
    call.update(ok=False, result=None,
                error={"code": "SEA532", "message": "tool 'memory_recent' failed: OSError: gone"})


def _describe_recent(data: dict[str, Any]) -> None:
    data["tools"]["memory_recent"]["description"] = "The newest messages."


@pytest.mark.parametrize(
    ("edit", "field", "action", "expected", "actual"),
    [
        # the recorded schema drives the ref's normalization (maxLength is not in the prompt)
        (_limit_query, "action 'search' normalized[0].rule", "search", "string.json",
         "string.truncated"),
        (_fail_recent, "action 'recent' status", "recent", "ok", "failed"),
    ],
)
def test_a_replay_that_runs_an_action_otherwise_names_the_action_and_field(
    sea: Sea,
    edit: Any,
    field: str,
    action: str,
    expected: str,
    actual: str,
) -> None:
    trace, data = record(sea, RECENT, SEARCH)
    edit(data)
    trace.write_bytes(orjson.dumps(data))

    replayed = sea("replay", str(trace), "--json")
    assert replayed.code == 1, replayed.out
    assert orjson.loads(replayed.out)["divergence"] == {
        "playbook": "recall", "node": "act", "field": field, "expected": expected,
        "actual": actual, "action": action,
    }
    text = sea("replay", str(trace))
    assert f"replay diverged at recall.act: {field}\n" in text.out


def test_replayed_tools_carry_the_recorded_descriptions(sea: Sea) -> None:
    trace, data = record(sea, RECENT, SEARCH)
    _describe_recent(data)
    trace.write_bytes(orjson.dumps(data))

    replayed = sea("replay", str(trace), "--json")
    assert replayed.code == 1
    divergence = orjson.loads(replayed.out)["divergence"]
    assert divergence["field"] == f"llm.messages[{prompt_index(data)}].content"
    assert "- memory_recent: The persona's most recent messages" in divergence["expected"]
    assert "- memory_recent: The newest messages." in divergence["actual"]


REFUSED = ("search", "memory_search", {"query": "cat", "tags": "ref:recent"})
"""``tags`` is a list of strings: the recent messages (objects) pass the ref's normalization
as they are, and the tool's argument check refuses them."""
MISFIT = ("search", "memory_search", {"query": "cat", "limit": "ref:recent"})
"""``limit`` is an integer: a list cannot be one, so the ref itself fails (no tool call)."""
AGAIN = ("again", "memory_recent", {"limit": 1})


@pytest.mark.parametrize(
    ("failing", "code", "words", "called"),
    [
        (REFUSED, "SEA531", "'tags'", True),
        (MISFIT, "SEA531", "'limit' (ref:recent)", False),
    ],
)
def test_a_failed_action_and_the_skipped_ones_are_recorded_and_replay(
    sea: Sea, failing: tuple[str, str, dict[str, Any]], code: str, words: str, called: bool
) -> None:
    trace, data = record(sea, RECENT, failing, AGAIN)
    assert data["status"] == "ok", "a failed action is an outcome, not the node's failure"

    recent, search, again = data["actions"]
    assert recent["status"] == "ok"
    assert search["status"] == "failed"
    assert search["error"]["code"] == code
    assert search["error"]["message"].startswith("action 'search': ")
    assert words in search["error"]["message"]
    assert again["status"] == "skipped"
    assert again["parameters"] == {"limit": 1}, "a skipped action keeps its planned parameters"
    assert again["arguments"] is None and again["normalized"] == []
    assert again["error"] == {"code": "SEA535",
                              "message": "not run: action 'search' before it failed"}

    searched = [
        (c["action_id"], c["ok"]) for c in data["tool_calls"] if c["tool"] == "memory_search"
    ]
    assert searched == ([("search", False)] if called else []) + [(None, True)]
    assert (search["arguments"] is not None) is called

    # the refused call never reached the tool: the replay must not answer the later
    # memory_search call (the lookup node) with the refused call's failure
    replayed = sea("replay", str(trace))
    assert replayed.code == 0, replayed.out + replayed.err
    assert replayed.out.startswith("replay matched:")


def test_a_tool_that_raised_fails_the_same_way_in_the_replay(sea: Sea) -> None:
    workspace = sea.root / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("Tama is a grey cat.\n", encoding="utf-8")
    books = sea.root / "books"
    books.mkdir()
    (books / "files.json").write_bytes(orjson.dumps({
        "name": "files",
        "description": "Reads workspace files with a planned pipeline.",
        "start_node": "act",
        "nodes": [{"id": "act", "type": "actions", "action": "Do what the user asked: {input}",
                   "available_tools": ["read_file", "memory_search", "search_files"],
                   "output_key": "outcomes"}],
    }))
    script = sea.script({"responses": {"files.act": [plan(
        ("read_doc", "read_file", {"path": "notes.md"}),
        ("search", "memory_search", {"query": "ref:read_doc"}),
        ("missing", "read_file", {"path": "gone.md"}),
        ("grep", "search_files", {"query": "cat"}),
    )]}})
    trace = sea.root / "trace.json"
    done = sea("run", "files", "--playbooks", str(books), "--workspace", str(workspace),
               "--input", "read my notes", "--model", script, "--record", str(trace))
    assert done.code == 0, done.err
    data = orjson.loads(trace.read_bytes())

    read_doc, search, missing, grep = data["actions"]
    assert search["normalized"][0]["rule"] == "string.content"
    assert search["arguments"] == {"query": "Tama is a grey cat.\n"}
    assert missing["status"] == "failed"
    assert missing["error"]["code"] == "SEA532"
    assert "WorkspaceError: no such file or directory" in missing["error"]["message"]
    assert grep["status"] == "skipped"
    assert "search_files" in data["tools"], "offered, never called: still in the catalogue"

    # no workspace here: the replay answers read_file and offers search_files from the trace,
    # and the failure's message is compared as recorded
    replayed = sea("replay", str(trace))
    assert replayed.code == 0, replayed.out + replayed.err
    assert replayed.out.startswith("replay matched: 1 nodes, 1 model calls, 3 tool calls")


NEW_FIELDS = ("plans", "actions", "tools")


def test_a_trace_written_before_pipelines_were_recorded_still_loads_and_replays(
    sea: Sea,
) -> None:
    trace = sea.root / "old.json"
    done = sea("run", "--input", "Hello", "--model", sea.script(), "--record", str(trace))
    assert done.code == 0, done.err
    data = orjson.loads(trace.read_bytes())
    assert data["tool_calls"], "the router lists the playbooks with a tool"
    for name in NEW_FIELDS:
        del data[name]
    for call in data["tool_calls"]:
        del call["action_id"]
    trace.write_bytes(orjson.dumps(data))

    loaded = load_trace(trace)
    assert (loaded.plans, loaded.actions, loaded.tools) == ([], [], {})
    assert all(call.action_id is None for call in loaded.tool_calls)
    replayed = sea("replay", str(trace))
    assert replayed.code == 0, replayed.out + replayed.err
    assert replayed.out.startswith("replay matched:")
