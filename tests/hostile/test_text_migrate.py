"""``sea migrate --write`` writes through a symbolic link to its target and keeps a hard
linked file's inode (so every name sees the migrated playbook), and ``sea migrate`` prints
file names with their control characters and non-UTF-8 bytes made visible."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sea.cli import main

ROOT = Path(__file__).resolve().parents[2]
SOURCE = (ROOT / "tests" / "data" / "saiverse_broken" / "x_reply.json").read_bytes()
"""A SAIVerse playbook that ``sea migrate`` rewrites."""
MIGRATED = b'"true": "reply"'
"""A piece of the rewritten playbook."""


def migrate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    capsys.readouterr()
    assert main(["migrate", *argv]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return out, err


def test_write_goes_through_a_symbolic_link_to_its_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: the link was replaced by a regular file and its target kept the old text
    real = tmp_path / "shared" / "x_reply.json"
    real.parent.mkdir()
    real.write_bytes(SOURCE)
    books = tmp_path / "books"
    books.mkdir()
    link = books / "x_reply.json"
    link.symlink_to(Path("..") / "shared" / "x_reply.json")
    migrate(capsys, "--write", str(link))
    assert link.is_symlink() and os.readlink(link) == os.path.join("..", "shared", "x_reply.json")
    assert MIGRATED in real.read_bytes()
    real.write_bytes(SOURCE)
    migrate(capsys, "--write", str(books))  # found in a directory: the same
    assert link.is_symlink() and MIGRATED in real.read_bytes()
    assert sorted(p.name for p in books.iterdir()) == ["x_reply.json"]  # no temporary left


def test_write_keeps_a_hard_linked_file_one_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: the rename split the link: the other name kept the old text
    first = tmp_path / "x_reply.json"
    first.write_bytes(SOURCE)
    first.chmod(0o640)
    other = tmp_path / "elsewhere.txt"
    os.link(first, other)
    migrate(capsys, "--write", str(first))
    assert os.path.samefile(first, other)
    assert MIGRATED in other.read_bytes() and other.read_bytes() == first.read_bytes()
    assert first.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.txt", "x_reply.json"]


def test_file_names_are_printed_with_their_escapes_visible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: the diff headers and messages held the raw ESC sequence, a raw newline (a
    # name could forge a diff header) and the raw byte 0xFF
    evil = tmp_path / "e\x1b[2Jv\nil.json"
    evil.write_bytes(SOURCE)
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xff.json"), "wb") as bad:
        bad.write(SOURCE)
    os.mkfifo(tmp_path / "pi\x1b]0;x\x07pe\xff.json")  # skipped, with a warning naming it
    out, err = migrate(capsys, str(tmp_path))
    printed = out + err
    headers = [line for line in out.splitlines() if line.startswith(("--- ", "+++ "))]
    assert len(headers) == 4
    assert f"--- {tmp_path}/e^[[2Jv\\nil.json" in headers
    assert f"--- {tmp_path}/bad\\xff.json" in headers
    assert [c for c in printed if ord(c) < 0x20 and c not in "\n\t"] == []
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in printed)
    assert "pi^[]0;x^Gpe\xff.json: SEA006 warning" in err
    assert "2 files checked: 2 would change" in err
