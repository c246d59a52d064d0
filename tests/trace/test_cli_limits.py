"""``sea run --limit NAME=VALUE``: every bound of ``Limits`` from the command line, checked
where the option is read, and repeated in the printed resume command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.trace.conftest import Sea

COUNT = {
    "name": "count_up",
    "description": "Counts to three in a loop of set nodes, then speaks.",
    "start_node": "start",
    "nodes": [
        {"id": "start", "type": "set", "assignments": {"n": 0}, "next": "step"},
        {"id": "step", "type": "set", "assignments": {"n": "=n + 1"},
         "conditional_next": {"field": "n", "cases": {"3": "done"}, "default": "step"}},
        {"id": "done", "type": "speak", "action": "Counted to {n}."},
    ],
}


def books(sea: Sea) -> Path:
    directory = sea.root / "books"
    directory.mkdir(exist_ok=True)
    (directory / "count_up.json").write_bytes(orjson.dumps(COUNT))
    return directory


def run(sea: Sea, *options: str) -> tuple[int, dict[str, Any] | None, str]:
    done = sea("run", "count_up", "--input", "go", "--model", sea.script({"default": []}),
               "--playbooks", str(books(sea)), "--json", *options)
    return done.code, orjson.loads(done.out) if done.out.strip() else None, done.err


def test_without_a_limit_option_the_loop_runs_to_its_end(sea: Sea) -> None:
    code, result, err = run(sea)
    assert code == 0, err
    assert result is not None and result["spoken"] == ["Counted to 3."]


def test_a_visit_bound_from_the_command_line_stops_the_loop(sea: Sea) -> None:
    code, result, err = run(sea, "--limit", "max_visits=2")
    assert code == 1, err
    assert result is not None and result["status"] == "error"
    assert result["spoken"] == []
    assert "max_visits" in orjson.dumps(result["error"]).decode()


def test_the_last_value_of_a_name_wins(sea: Sea) -> None:
    code, result, err = run(sea, "--limit", "max_visits=2", "--limit", "max_visits=5")
    assert code == 0, err
    assert result is not None and result["spoken"] == ["Counted to 3."]


@pytest.mark.parametrize(("option", "words"), [
    ("max_visit=2", ["no limit named 'max_visit'", "did you mean `max_visits`", "max_steps"]),
    ("max_visits=0", ["max_visits is a whole number of at least 1", "'0'"]),
    ("max_visits=lots", ["max_visits is a whole number of at least 1", "'lots'"]),
    ("max_visits", ["expected NAME=VALUE"]),
    ("unlisted_exec=maybe", ["unlisted_exec is one of deny, ask"]),
    ("budget=3", ["budget has an option of its own", "--max-calls"]),
    ("tool_timeout_s=3", ["--tool-timeout"]),
])
def test_a_bad_limit_is_a_usage_error_naming_what_is_expected(
    sea: Sea, option: str, words: list[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        run(sea, "--limit", option)
    assert exited.value.code == 2
    err = sea.capsys.readouterr().err
    assert "Traceback" not in err
    for word in words:
        assert word in err


def test_the_resume_command_repeats_the_limits(sea: Sea) -> None:
    waits = dict(COUNT, nodes=[
        {"id": "start", "type": "tool", "action": "memory_recent", "args": {"limit": 1},
         "next": "done"},
        {"id": "done", "type": "speak", "action": "Looked."},
    ])
    directory = books(sea)
    (directory / "count_up.json").write_bytes(orjson.dumps(waits))
    done = sea("run", "count_up", "--input", "go", "--model", sea.script({"default": []}),
               "--playbooks", str(directory), "--ask-before", "memory_recent",
               "--limit", "max_steps=40", "--limit", "unlisted_exec=ask")
    assert done.code == 0, done.err
    assert "--limit max_steps=40 --limit unlisted_exec=ask" in done.out + done.err
