"""``sea memory``: recent, pulse, search, export, import on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from saimemory import CONVERSATION_TAG, NewMessage
from saimemory.sqlite import SQLiteStore
from sea.cli import main


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    store.append(NewMessage("alice", "user", "東京タワーを見た", pulse_id="p1",
                            tags=(CONVERSATION_TAG,)))
    store.append(NewMessage("alice", "user", "<system>result</system>", pulse_id="p1",
                            playbook="research", node="save"))
    store.append(NewMessage("alice", "assistant", "Nice view!", pulse_id="p2",
                            tags=(CONVERSATION_TAG,)))
    store.close()
    return str(path)


def test_recent_lists_messages_with_tags_and_pulse(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", "recent", "--db", db, "--persona", "alice", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "東京タワー" not in out
    assert "[pulse p1] tags: pulse:p1, playbook:research, node:save" in out
    assert "assistant [pulse p2] tags: conversation, pulse:p2" in out and "Nice view!" in out


def test_list_alias_and_json_output(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "list", "--db", db, "--persona", "alice", "--json"]) == 0
    rows = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["content"] for row in rows] == ["東京タワーを見た", "<system>result</system>",
                                                "Nice view!"]


def test_pulse_shows_one_pulse(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "pulse", "--db", db, "--persona", "alice", "p1", "--json"]) == 0
    rows = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["pulse_id"] for row in rows] == ["p1", "p1"]
    assert main(["memory", "pulse", "--db", db, "--persona", "alice", "nope"]) == 1
    assert "no messages of pulse 'nope'" in capsys.readouterr().err


def test_search_any_takes_a_natural_question(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    question = ["memory", "search", "--db", db, "--persona", "alice", "What a view!"]
    assert main(question) == 0
    assert capsys.readouterr().out == ""
    assert main([*question, "--any"]) == 0
    assert "assistant (rank" in capsys.readouterr().out
    assert main([*question, "--any", "--json"]) == 0
    rows = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["content"] for row in rows] == ["Nice view!"]


def test_search_with_filters(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "search", "--db", db, "--persona", "alice", "東京"]) == 0
    assert "東京タワーを見た" in capsys.readouterr().out
    assert main(["memory", "search", "--db", db, "--persona", "alice", "東京", "--tag",
                 "node:save"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["memory", "search", "--db", db, "--persona", "alice", "view",
                 "--since", "2000-01-01T00:00:00+00:00"]) == 0
    assert "assistant (rank 1.000): Nice view!" in capsys.readouterr().out  # one word, once


def test_export_then_import_into_another_persona(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "alice.jsonl"
    assert main(["memory", "export", "--db", db, "--persona", "alice", "-o", str(dump)]) == 0
    assert len(dump.read_bytes().splitlines()) == 3
    assert main(["memory", "import", "--db", db, "--persona", "bob", str(dump)]) == 0
    assert "imported 3 messages (0 already present)" in capsys.readouterr().err
    assert main(["memory", "import", "--db", db, "--persona", "bob", str(dump)]) == 0
    assert "imported 0 messages (3 already present)" in capsys.readouterr().err
    store = SQLiteStore(db)
    try:
        assert [m.content for m in store.iter_messages("bob")] == \
            [m.content for m in store.iter_messages("alice")]
    finally:
        store.close()


def test_store_from_environment(db: str, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SEA_DB", db)
    assert main(["memory", "recent", "--persona", "alice"]) == 0
    assert "Nice view!" in capsys.readouterr().out


def test_usage_and_store_errors_are_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SEA_DB", raising=False)
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    assert main(["memory", "recent", "--persona", "alice"]) == 0
    assert (tmp_path / "home" / "memory.sqlite").is_file()  # the store `sea run` uses
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 100)
    assert main(["memory", "recent", "--db", str(bad), "--persona", "a"]) == 1
    assert "MEM003" in capsys.readouterr().err and bad.read_bytes() == b"garbage" * 100
    assert main(["memory", "search", "--db", str(tmp_path / "ok.db"), "--persona", "a", "x",
                 "--since", "2025-01-01"]) == 2
    assert "needs a UTC offset" in capsys.readouterr().err
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"role": "user"}\n')
    assert main(["memory", "import", "--db", str(tmp_path / "ok.db"), "--persona", "a",
                 str(broken)]) == 1
    assert f"MEM005 error: {broken}: line 1: missing content" in capsys.readouterr().err


def test_delete_needs_confirmation(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "delete", "--db", db, "--persona", "alice"]) == 2
    assert "--yes" in capsys.readouterr().err
    assert main(["memory", "delete", "--db", db, "--persona", "alice", "--yes"]) == 0
    assert "deleted 3 messages" in capsys.readouterr().err
    assert main(["memory", "recent", "--db", db, "--persona", "alice"]) == 0
    assert capsys.readouterr().out == ""


def test_threads_lists_main_first(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = SQLiteStore(db)
    side = store.create_thread("alice", title="research notes")
    store.close()
    assert main(["memory", "threads", "--db", db, "--persona", "alice"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("alice:main  main  ")
    assert lines[1].startswith(f"{side.id}  research notes (in alice:main)")


def test_a_failed_export_leaves_the_target_as_it_was(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "keep.jsonl"
    target.write_text("earlier export\n")
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 100)
    assert main(["memory", "export", "--db", str(bad), "--persona", "a", "-o", str(target)]) == 1
    assert "MEM003" in capsys.readouterr().err
    missing = tmp_path / "no" / "such" / "dir" / "out.jsonl"
    assert main(["memory", "export", "--db", db, "--persona", "alice", "-o", str(missing)]) == 2
    assert f"SEA324 error: cannot write {missing}" in capsys.readouterr().err
    assert target.read_text() == "earlier export\n"
    assert main(["memory", "export", "--db", db, "--persona", "alice", "-o", str(target)]) == 0
    assert len(target.read_bytes().splitlines()) == 3
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_an_empty_persona_is_a_usage_error(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["memory", "recent", "--db", db, "--persona", " "])
    assert info.value.code == 2
    assert "a persona id cannot be empty" in capsys.readouterr().err
