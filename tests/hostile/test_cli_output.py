"""The ``sea`` command facing hostile text and places: terminal control sequences from a
model, the store, a trace or a file are printed visibly, never obeyed (JSON output stays
JSON); ``--record`` into an unwritable directory and a read-only store or data directory
are clear errors before any pulse runs, never tracebacks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from saimemory import CONVERSATION_TAG, NewMessage
from saimemory.sqlite import SQLiteStore
from tests.trace.conftest import Outcome, Sea

EVIL = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\x9b1m"
"""An OSC window title, clear screen, a colour, a carriage return and a C1 CSI."""
SHOWN = "^[]0;pwned^G^[[2J^[[31mred^M\\u009b1m"
"""How :data:`EVIL` is printed."""


def raw_controls(text: str) -> list[str]:
    """The control characters in ``text`` that a terminal would obey (all but \\n, \\t)."""
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]


def visible(done: Outcome) -> str:
    """What the command printed, checked for raw control characters and tracebacks."""
    printed = done.out + done.err
    assert raw_controls(printed) == [], printed
    assert "Traceback" not in printed
    return printed


@pytest.fixture
def sea(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Sea:
    """``sea`` with ``SEA_HOME`` and ``SEA_DB`` pointing into ``tmp_path``."""
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SEA_DB", str(tmp_path / "home" / "memory.sqlite"))
    return Sea(tmp_path, capsys)


def script(answer: str) -> dict[str, object]:
    """Model answers for one ``meta_user`` pulse whose reply is ``answer``."""
    return {"responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "a greeting"}],
        "sub_speak.compose": [answer],
    }}


@pytest.fixture
def evil_store(tmp_path: Path) -> str:
    """A store whose message, tag and thread title carry control sequences."""
    path = tmp_path / "evil.sqlite"
    store = SQLiteStore(path)
    side = store.create_thread("aoi", title=f"side {EVIL}")
    store.append(NewMessage("aoi", "assistant", f"cats {EVIL} end", pulse_id="p1",
                            tags=(CONVERSATION_TAG,)))
    store.append(NewMessage("aoi", "user", f"note {EVIL}", thread=side.id, pulse_id="p1"))
    store.close()
    return str(path)


def test_memory_commands_print_stored_escapes_visibly(sea: Sea, evil_store: str) -> None:
    # before: the sequences were printed raw (the terminal cleared, retitled, recoloured)
    for argv in (["recent"], ["search", "cats"], ["pulse", "p1"], ["threads"]):
        done = sea("memory", *argv, "--db", evil_store)
        assert done.code == 0, done.err
        assert SHOWN in visible(done), argv
    as_json = sea("memory", "recent", "--db", evil_store, "--json")
    contents = [orjson.loads(line)["content"] for line in as_json.out.splitlines()]
    assert f"cats {EVIL} end" in contents  # JSON keeps the text (escaped by JSON itself)


def test_a_model_reply_is_streamed_with_its_escapes_visible(sea: Sea) -> None:
    # before: the reply's sequences reached the terminal raw
    model = sea.script(script(f"Hello {EVIL} there"))
    done = sea("run", "--input", "Hi", "--model", model)
    assert done.code == 0, done.err
    assert f"Hello {SHOWN} there" in visible(done)
    as_json = sea("run", "--input", "Hi", "--model", model, "--json")
    assert orjson.loads(as_json.out)["spoken"] == [f"Hello {EVIL} there"]


def test_a_replay_report_prints_recorded_answers_visibly(sea: Sea) -> None:
    # before: the divergence quoted the recorded answers raw
    trace = sea.root / "trace.json"
    done = sea("run", "--input", "Hi", "--model", sea.script(script("Hello")),
               "--record", str(trace))
    assert done.code == 0, done.err
    recorded = orjson.loads(trace.read_bytes())
    recorded["llm_calls"][-1]["response"] = f"Bye {EVIL}"
    recorded["playbook_dirs"] = [f"/nowhere/{EVIL}"]
    trace.write_bytes(orjson.dumps(recorded))
    replayed = sea("replay", str(trace))
    assert replayed.code == 1
    printed = visible(replayed)
    assert f"Bye {SHOWN}" in printed and f"/nowhere/{SHOWN}" in printed


def test_error_messages_print_escapes_visibly(sea: Sea) -> None:
    # before: a field name from the file reached the terminal raw in the error message
    bad = sea.root / "evil.json"
    bad.write_bytes(orjson.dumps({"name": "evil", "description": "d", "start_node": "a",
                                  "nodes": [{"id": "a", "type": "pass"}], f"x{EVIL}": 1}))
    done = sea("run", str(bad), "--input", "Hi", "--model", sea.script())
    assert done.code == 1
    assert f"x{SHOWN}" in visible(done)
    checked = sea("validate", str(bad))
    assert checked.code == 1 and f"x{SHOWN}" in visible(checked)


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """An empty directory without write bits (restored afterwards)."""
    directory = tmp_path / "ro"
    directory.mkdir()
    directory.chmod(0o555)
    yield directory
    directory.chmod(0o755)


def test_record_into_an_unwritable_directory_fails_before_the_pulse(
    sea: Sea, read_only_dir: Path
) -> None:
    # before: the pulse ran (root ignores the mode; others lost the trace after the pulse)
    done = sea("run", "--input", "Hi", "--model", sea.script(script("Hello")),
               "--record", str(read_only_dir / "trace.json"))
    assert done.code == 2 and "not writable" in visible(done) and "nothing was run" in done.err
    assert list(read_only_dir.iterdir()) == []
    store = SQLiteStore(sea.root / "home" / "memory.sqlite")
    try:
        assert store.recent("aoi") == []  # no pulse wrote anything
    finally:
        store.close()


def test_a_read_only_data_directory_is_a_clear_error(
    sea: Sea, read_only_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: the store was created and the pulse ran in a directory without write bits
    monkeypatch.setenv("SEA_HOME", str(read_only_dir))
    monkeypatch.delenv("SEA_DB")
    done = sea("run", "--input", "Hi", "--model", sea.script(script("Hello")))
    assert done.code == 1 and "MEM004" in visible(done) and "not writable" in done.err
    listed = sea("memory", "recent")
    assert listed.code == 1 and "not writable" in visible(listed)
    assert list(read_only_dir.iterdir()) == []


def test_a_read_only_store_serves_reads_and_refuses_a_pulse_clearly(
    sea: Sea, evil_store: str
) -> None:
    # before: root wrote into the read-only file (the pulse ran)
    path = Path(evil_store)
    path.chmod(0o444)
    before = path.read_bytes()
    listed = sea("memory", "recent", "--db", evil_store)
    assert listed.code == 0 and SHOWN in visible(listed)
    done = sea("run", "--input", "Hi", "--db", evil_store, "--model", sea.script(script("Hi")))
    assert done.code == 1 and "MEM010" in visible(done) and "nothing was run" in done.err
    dump = sea.root / "dump.jsonl"
    dump.write_bytes(orjson.dumps({"persona": "aoi", "role": "user", "content": "x",
                                   "tags": [], "created_at": "2025-01-01T00:00:00+00:00"}))
    imported = sea("memory", "import", "--db", evil_store, str(dump))
    assert imported.code == 1 and "MEM010" in visible(imported)
    assert path.read_bytes() == before
