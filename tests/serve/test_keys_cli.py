"""``sea keys add|list|revoke``: the key printed once and alone, never listed; clean errors
with their exit codes; the store of --db, else of the project file."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sea.cli import main
from sea.serve.db import ServerDB
from sea.serve.keys import KeyStore, looks_like_key


def sea(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@contextmanager
def stored(location: Path) -> Iterator[KeyStore]:
    db = ServerDB(str(location))
    try:
        yield KeyStore(db)
    finally:
        db.close()


def test_add_prints_the_key_once_and_alone(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    db = tmp_path / "memory.sqlite"
    code, out, err = sea(capsys, "keys", "add", "alice", "--role", "read", "--role", "run",
                         "--tenant", "acme", "--personas", "acme-*", "--db", str(db))
    assert code == 0
    secret = out.strip()
    assert looks_like_key(secret) and out == secret + "\n"
    assert "'alice': roles read, run; tenant acme; personas acme-*" in err
    assert "shown once" in err and secret not in err
    with stored(db) as keys:
        key = keys.verify(secret)
    assert key is not None and (key.name, key.roles, key.tenant) == ("alice", ("read", "run"),
                                                                     "acme")

    code, out, err = sea(capsys, "keys", "list", "--db", str(db))
    assert code == 0 and secret not in out and secret[:11] in out
    assert "alice" in out and "tenant=acme personas=acme-*" in out and "active" in out
    code, out, _ = sea(capsys, "keys", "list", "--db", str(db), "--json")
    assert secret not in out and '"name":"alice"' in out


def test_revoke_by_name_or_id(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "memory.sqlite")
    _, out, _ = sea(capsys, "keys", "add", "alice", "--role", "read", "--db", db)
    secret = out.strip()
    with stored(Path(db)) as keys:
        key_id = keys.get("alice").id
    code, out, _ = sea(capsys, "keys", "revoke", "alice", "--db", db)
    assert code == 0 and f"key {key_id} 'alice' revoked" in out
    code, out, _ = sea(capsys, "keys", "revoke", key_id, "--db", db)
    assert code == 0 and "was revoked already" in out
    with stored(Path(db)) as keys:
        assert keys.verify(secret) is None
    code, out, err = sea(capsys, "keys", "list", "--active", "--db", db)
    assert code == 0 and out == "" and "dev mode" in err
    _, out, _ = sea(capsys, "keys", "list", "--db", db)
    assert "revoked 20" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["add", "alice", "--role", "raed"], "SEA865 error: unknown role 'raed'; did you mean 'read'"),
    (["add", "", "--role", "read"], "SEA865 error: the key's name is empty"),
    (["add", "bob", "--role", "read", "--tenant", "a b"], "SEA865 error: the tenant 'a b'"),
    (["add", "bob", "--role", "read", "--personas", "a b"], "SEA865 error: the persona pattern"),
    (["add", "taken", "--role", "read"], "SEA867 error: a key named 'taken' exists already"),
    (["revoke", "tkaen"], "SEA866 error: no key has the id or name 'tkaen'; did you mean 'taken'"),
])
def test_mistakes_are_clean_errors_that_exit_2(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path, argv: list[str],
                                               message: str) -> None:
    db = str(tmp_path / "memory.sqlite")
    assert sea(capsys, "keys", "add", "taken", "--role", "read", "--db", db)[0] == 0
    code, out, err = sea(capsys, "keys", *argv, "--db", db)
    assert code == 2 and out == ""
    assert err.startswith(f"sea: {message}") and "Traceback" not in err
    with stored(Path(db)) as keys:
        assert [key.name for key in keys.list()] == ["taken"]


def test_a_role_is_required(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["keys", "add", "alice", "--db", str(tmp_path / "m.sqlite")])
    assert caught.value.code == 2
    assert "--role" in capsys.readouterr().err


def test_the_project_file_names_the_store(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SEA_DB", raising=False)
    (tmp_path / "sea.toml").write_text('db = "project.sqlite"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = sea(capsys, "keys", "add", "alice", "--role", "admin")
    assert code == 0
    with stored(tmp_path / "project.sqlite") as keys:
        assert keys.verify(out.strip()) is not None
    _, listed, _ = sea(capsys, "keys", "list")
    assert "alice" in listed
