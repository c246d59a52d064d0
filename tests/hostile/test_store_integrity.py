"""A store whose index is corrupt is refused when it is opened, and nothing is written to it.

SQLite's ``PRAGMA quick_check`` does not compare an index with its table, so a store whose
index page points at the wrong rows passed it and took writes (once in 30 random
corruptions of the attack suite). Here one index entry of a real store file is changed on
purpose (its page found from ``sqlite_master``, its record parsed), so that the file's
structure stays valid and only the index's content is wrong: the kind of damage
``quick_check`` misses."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from saimemory import CONVERSATION_TAG, NewMessage
from saimemory.errors import SchemaError
from saimemory.sqlite import SQLiteStore
from sea.cli import main

INDEXES = ["messages_persona", "messages_time", "messages_uid",
           "sqlite_autoindex_message_tags_1", "message_tags_conversation"]
_SERIAL_SIZES = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8, 7: 8, 8: 0, 9: 0}


@pytest.fixture(scope="module")
def store_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes of a closed store of 300 messages."""
    path = tmp_path_factory.mktemp("base") / "memory.sqlite"
    store = SQLiteStore(path)
    store.append_many([
        NewMessage("aoi", "user" if i % 2 else "assistant", f"message {i} about cats " * 3,
                   tags=(CONVERSATION_TAG, f"t{i % 7}"))
        for i in range(300)
    ])
    store.close()
    return path.read_bytes()


def _varint(data: bytes | bytearray, pos: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``pos``, and the position after it."""
    value = 0
    for i in range(9):
        byte = data[pos + i]
        if i == 8:
            return (value << 8) | byte, pos + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    raise AssertionError("unreachable")


def corrupt_index_entry(path: Path, index: str) -> None:
    """Change the row id of the first entry on ``index``'s root page (a leaf or an interior
    page of the index's b-tree), by one: the entry now names another row, while the page,
    its cell and the key order stay valid."""
    conn = sqlite3.connect(path)
    try:
        [(root,)] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", [index])
        [(page_size,)] = conn.execute("PRAGMA page_size")
    finally:
        conn.close()
    data = bytearray(path.read_bytes())
    page = (root - 1) * page_size
    kind = data[page]
    assert kind in (0x02, 0x0A), f"page {root} is not an index page ({kind:#x})"
    header = 8 if kind == 0x0A else 12
    cell = page + int.from_bytes(data[page + header:page + header + 2], "big")
    if kind == 0x02:  # an interior page's cell starts with its left child's page number
        cell += 4
    _, record = _varint(data, cell)  # the payload's size
    header_size, pos = _varint(data, record)
    types: list[tuple[int, int]] = []  # (serial type, where it is written)
    while pos < record + header_size:
        start = pos
        serial, pos = _varint(data, pos)
        types.append((serial, start))
    sizes = [_SERIAL_SIZES.get(t, (t - 12) // 2) for t, _ in types]
    last_type, where = types[-1]  # the row id, last in every index record
    assert last_type in _SERIAL_SIZES and last_type != 7, types
    if last_type in (8, 9):  # the constants 0 and 1, written in the header alone
        data[where] ^= 1
    else:
        data[record + header_size + sum(sizes) - 1] ^= 1
    path.write_bytes(bytes(data))


def _quick_check(path: Path) -> list[tuple[str]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(conn.execute("PRAGMA quick_check"))
    finally:
        conn.close()


@pytest.mark.parametrize("index", INDEXES)
def test_a_store_with_a_corrupt_index_is_refused_untouched(
    index: str, store_bytes: bytes, tmp_path: Path
) -> None:
    path = tmp_path / "memory.sqlite"
    path.write_bytes(store_bytes)
    corrupt_index_entry(path, index)
    assert _quick_check(path) == [("ok",)]  # the damage quick_check misses
    before = path.read_bytes()
    with pytest.raises(SchemaError) as info:
        store = SQLiteStore(path)
        store.append(NewMessage("aoi", "user", "written into a corrupt store"))  # before: taken
        store.close()
    assert info.value.code == "MEM003"
    assert f"{path} is corrupt" in info.value.message and index in info.value.message
    assert "it was not changed" in info.value.message and "backup" in info.value.message
    assert path.read_bytes() == before
    assert not path.with_name(path.name + "-wal").exists()


def test_the_cli_refuses_a_store_with_a_corrupt_index(
    store_bytes: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "memory.sqlite"
    path.write_bytes(store_bytes)
    corrupt_index_entry(path, "messages_persona")
    before = path.read_bytes()
    export = tmp_path / "more.jsonl"
    export.write_text(json.dumps({"persona": "aoi", "role": "user", "content": "one more",
                                  "tags": ["conversation"],
                                  "created_at": "2026-01-01T00:00:00+00:00"}) + "\n")
    code = main(["memory", "import", str(export), "--db", str(path)])
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    assert "MEM003" in err and "is corrupt" in err and "messages_persona" in err, err
    assert "Traceback" not in err
    assert path.read_bytes() == before
