"""A file whose name is not UTF-8 never takes its folder down: ``list_files`` and
``search_files`` leave it out (it could be neither shown in a tool's JSON result nor given
back) and return the rest, as JSON that serializes."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from sea.engine.tools.workspace import Workspace

BAD_NAME = b"bad\xff\xfe.txt"


def test_a_non_utf8_name_leaves_the_rest_of_the_folder_usable(tmp_path: Path) -> None:
    # before: the entry came back as 'bad\udcff\udcfe.txt' (lone surrogates), and the whole
    # result failed to serialize ("str is not valid UTF-8: surrogates not allowed")
    (tmp_path / "sub").mkdir()
    for folder in (tmp_path, tmp_path / "sub"):
        with open(os.path.join(os.fsencode(folder), BAD_NAME), "w", encoding="utf-8") as bad:
            bad.write("hello from a bad name\n")
        (folder / "ok.txt").write_text("hello from ok\n", encoding="utf-8")
    tools = Workspace(tmp_path)
    listed = tools.list_files(".")
    assert [e["path"] for e in listed["entries"]] == ["ok.txt", "sub"]
    assert [e["path"] for e in tools.list_files("sub")["entries"]] == ["sub/ok.txt"]
    found = tools.search_files("hello")
    assert [(m["path"], m["text"]) for m in found["matches"]] == [
        ("ok.txt", "hello from ok"), ("sub/ok.txt", "hello from ok")]
    for result in (listed, found):
        assert orjson.loads(orjson.dumps(result)) == result
