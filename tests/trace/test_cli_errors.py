"""``sea run --json`` output, and clean errors (no traceback) for bad files and options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.trace.conftest import Outcome, Sea


def clean(done: Outcome, code: int, *words: str) -> None:
    """``done`` exited with ``code`` and a one-line ``sea:`` message naming ``words``."""
    assert done.code == code, done.err
    assert "Traceback" not in done.err + done.out
    assert done.err.startswith("sea: ")
    for word in words:
        assert word in done.err


def test_run_json_prints_one_object_with_the_pulse(sea: Sea) -> None:
    done = sea("run", "--input", "Hello", "--model", sea.script(), "--json")
    assert done.code == 0, done.err
    result = orjson.loads(done.out)
    assert set(result) == {
        "pulse_id", "status", "spoken", "error", "handled_errors", "llm_calls", "memory_writes",
        "plan_events",
    }
    assert result["handled_errors"] == []
    assert result["status"] == "ok" and result["error"] is None
    assert result["spoken"] == ["Hello! I'm Aoi."]
    assert isinstance(result["pulse_id"], str) and len(result["pulse_id"]) == 32
    # a greeting matches no playbook's examples: the router takes basic_chat, asking no model
    assert [(c["playbook"], c["node"]) for c in result["llm_calls"]] == [
        ("sub_speak", "compose"),
    ]
    assert [(w["role"], w["content"]) for w in result["memory_writes"]] == [
        ("user", "Hello"),
        ("assistant", "Hello! I'm Aoi."),
    ]


def test_missing_persona_file_is_a_usage_error(sea: Sea) -> None:
    missing = sea.root / "nobody.json"
    done = sea("run", "--input", "Hi", "--model", sea.script(), "--persona-file", str(missing))
    clean(done, 2, "persona file", str(missing))


def test_bad_model_spec_is_a_usage_error(sea: Sea) -> None:
    clean(sea("run", "--input", "Hi", "--model", "bogus:x"), 2, "unknown provider 'bogus'")


def test_missing_model_script_is_a_usage_error(sea: Sea) -> None:
    missing = sea.root / "none.json"
    clean(sea("run", "--input", "Hi", "--model", f"scripted:{missing}"), 2, str(missing))


def test_record_into_a_missing_directory_fails_before_the_pulse(sea: Sea) -> None:
    target = sea.root / "no" / "such" / "trace.json"
    done = sea("run", "--input", "Hi", "--model", sea.script(), "--record", str(target))
    clean(done, 2, "--record", "does not exist")
    assert not target.parent.exists()
    assert not (sea.root / "home" / "memory.sqlite").exists()  # nothing ran, nothing stored


def test_record_to_a_directory_is_a_usage_error(sea: Sea) -> None:
    done = sea("run", "--input", "Hi", "--model", sea.script(), "--record", str(sea.root))
    clean(done, 2, "--record", "is a directory")


def test_unusable_store_gives_a_clean_error(sea: Sea) -> None:
    done = sea("run", "--input", "Hi", "--model", sea.script(), "--db", str(sea.root))
    clean(done, 1, "MEM", "is a directory")


def write(path: Path, data: object) -> Path:
    path.write_bytes(orjson.dumps(data))
    return path


def test_json_that_is_not_a_trace_is_named(sea: Sea) -> None:
    done = sea("replay", str(write(sea.root / "other.json", {"hello": 1})))
    clean(done, 1, "SEA700", "is not a SEA trace", "version: field required")


def test_json_array_is_not_a_trace(sea: Sea) -> None:
    done = sea("replay", str(write(sea.root / "list.json", [1, 2])))
    clean(done, 1, "is not a SEA trace", "JSON array")


def test_unknown_trace_version_is_named(sea: Sea) -> None:
    done = sea("replay", str(write(sea.root / "v9.json", {"version": 9})))
    clean(done, 1, "trace format version 9 is not supported")


def test_trace_with_a_history_that_cannot_be_imported(sea: Sea) -> None:
    trace = sea.root / "trace.json"
    assert sea("run", "--input", "Hi", "--model", sea.script(), "--record", str(trace)).code == 0
    data = orjson.loads(trace.read_bytes())
    data["history"] = [{"role": "user"}]
    done = sea("replay", str(write(trace, data)))
    clean(done, 1, "SEA700", "history", "'aoi'", "cannot be imported", "missing content")


def test_a_trace_file_that_does_not_exist_could_not_start(sea: Sea) -> None:
    clean(sea("replay", str(sea.root / "absent.json")), 2, "the trace", "does not exist")


def test_a_playbook_file_that_is_missing_or_invalid_is_named_once(sea: Sea) -> None:
    missing = sea("run", str(sea.root / "nofile.json"), "--input", "x", "--model", sea.script())
    clean(missing, 2, "nofile.json", "SEA001", "does not exist")
    assert missing.err.count("SEA001") == 1
    broken = sea.root / "broken.json"
    broken.write_text('{"name": "broken", "start_node": "a", "nodes": [{"id": "a"}]}')
    invalid = sea("run", str(broken), "--input", "x", "--model", sea.script())
    clean(invalid, 1, "broken.json", "error")
    assert "sea: SEA" not in invalid.err


def test_a_persona_file_with_a_bad_id_says_what_is_wrong(sea: Sea) -> None:
    bad = sea.root / "persona.json"
    bad.write_text('{"id": 3, "name": "Ken"}')
    done = sea("run", "--input", "x", "--persona-file", str(bad), "--model", sea.script())
    clean(done, 2, "persona.json", "'id' must be a non-empty string, not 3")
    bad.write_text('{"name": "Ken"}')
    done = sea("run", "--input", "x", "--persona-file", str(bad), "--model", sea.script())
    clean(done, 2, "persona.json", "'id' is missing (or give --persona ID)")


def test_a_handled_failure_is_reported_and_fails_strict_runs(sea: Sea) -> None:
    bad_router = {
        "responses": {
            "sub_router_user.decide": [{"nope": 1}] * 3,
            "sub_speak.compose": ["Hello!"] * 2,
        }
    }
    model = sea.script(bad_router)
    # a memory question leaves the router two candidates, so its model is asked
    done = sea("run", "--input", "Do you remember my cat?", "--model", model, "--json")
    assert done.code == 0, done.err
    result = orjson.loads(done.out)
    assert result["status"] == "ok"
    [handled] = result["handled_errors"]
    assert (handled["playbook"], handled["node"]) == ("meta_user", "route")
    assert "did not match response_schema" in handled["message"]
    shown = sea("run", "--input", "Do you remember my cat?", "--model", model, "--strict")
    assert shown.code == 1
    assert "meta_user.route failed, handled:" in shown.err


def test_a_misspelt_playbook_is_a_usage_error_with_a_suggestion(sea: Sea) -> None:
    ran = sea("run", "meta_usr", "--input", "Hi", "--model", sea.script())
    clean(ran, 2, "SEA050", "did you mean `meta_user`?")
    drawn = sea("graph", "meta_usr")
    clean(drawn, 2, "SEA050", "did you mean `meta_user`?")


def test_a_db_in_a_missing_directory_is_refused_and_nothing_is_created(sea: Sea) -> None:
    missing = sea.root / "no" / "such" / "dir" / "memory.sqlite"
    clean(sea("run", "--input", "Hi", "--model", sea.script(), "--db", str(missing)), 2,
          "does not exist")
    clean(sea("memory", "recent", "--db", str(missing)), 2, "does not exist")
    assert not (sea.root / "no").exists()


def test_checkpoints_live_beside_the_db_and_memory_defaults_to_the_bundled_persona(
    sea: Sea,
) -> None:
    db = sea.root / "mine.sqlite"
    assert sea("run", "--input", "Hello", "--model", sea.script(), "--db", str(db)).code == 0
    assert (sea.root / "mine.checkpoints.sqlite").exists()
    listed = sea("memory", "recent", "--db", str(db))
    assert listed.code == 0 and "Hello! I'm Aoi." in listed.out


def test_empty_input_is_a_usage_error(sea: Sea) -> None:
    with pytest.raises(SystemExit) as info:
        sea("run", "--input", "  ", "--model", sea.script())
    assert info.value.code == 2
    assert "the input is empty" in sea.capsys.readouterr().err


def test_version(sea: Sea) -> None:
    done = sea("--version")
    assert done.code == 0 and done.out.startswith("sea ") and done.out.count("\n") == 1


def test_version_after_a_subcommand_name_is_its_usage_error(sea: Sea) -> None:
    with pytest.raises(SystemExit) as info:  # argparse: the subcommand's PATH is missing
        sea("validate", "--version")
    assert info.value.code == 2


def test_a_closed_pipe_ends_quietly(sea: Sea) -> None:
    db = sea.root / "memory.sqlite"
    assert sea("run", "--input", "Hello", "--model", sea.script(), "--db", str(db)).code == 0
    commands = [
        ["memory", "recent", "--db", str(db), "--limit", "50"],
        ["run", "--input", "Hi", "--model", sea.script(), "--db", str(db), "--json"],
    ]
    for command in commands:
        reader = subprocess.Popen(
            [sys.executable, "-m", "sea", *command], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert reader.stdout is not None
        reader.stdout.close()  # like `| head -c 0`: nobody reads
        _, err = reader.communicate(timeout=60)
        assert reader.returncode == 0, err
        assert b"Traceback" not in err and b"BrokenPipe" not in err
