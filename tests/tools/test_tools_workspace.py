"""Workspace tools against real directories: listing, chunked reading, search, and every way
out of the workspace refused."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.tools import BaseTool
from pydantic import ValidationError

from sea.engine.tools.box import ToolBox
from sea.engine.tools.signatures import (
    ARGUMENTS,
    MAX_READ_LIMIT,
    READ_LIMIT,
    WORKSPACE_ARGUMENTS,
    builtin_tool_schemas,
    workspace_tool_schemas,
)
from sea.engine.tools.workspace import (
    MAX_FILE_BYTES,
    MAX_LINE_CHARS,
    MAX_LIST_ENTRIES,
    MAX_MATCHES,
    WorkspaceError,
    workspace_tools,
)
from sea.errors import ToolArgumentError, ToolFailed, UsageError

SECRET = "TOPSECRET-beside-the-root"
NOTES = "first line\nSecond Line\nthird line\n"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace beside a secret: ``tmp_path/root`` and ``tmp_path/outside``.

    Inside: ``notes.txt``, ``sub/todo.md``, ``sub/deep/plan.txt``, links that stay inside
    (``inner`` → ``sub``, ``alias.txt`` → ``notes.txt``) and links out (``out`` → the outside
    folder, ``secret_link`` → the secret file, ``sub/up`` → the outside folder, relatively).
    """
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    workspace = tmp_path / "root"
    (workspace / "sub" / "deep").mkdir(parents=True)
    (workspace / "notes.txt").write_text(NOTES, "utf-8")
    (workspace / "sub" / "todo.md").write_text("- buy milk\n- call Tama\n", "utf-8")
    (workspace / "sub" / "deep" / "plan.txt").write_text("plan: call the vet\n", "utf-8")
    (workspace / "inner").symlink_to("sub", target_is_directory=True)
    (workspace / "alias.txt").symlink_to("notes.txt")
    (workspace / "out").symlink_to(outside, target_is_directory=True)
    (workspace / "secret_link").symlink_to(outside / "secret.txt")
    (workspace / "sub" / "up").symlink_to("../../outside", target_is_directory=True)
    return workspace


def tools_of(root: Path) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in workspace_tools(root)}


def run(root: Path, name: str, **args: Any) -> Any:
    """Call a tool directly; its result must be JSON (what a model is given)."""
    result = tools_of(root)[name].invoke(args)
    assert json.loads(json.dumps(result)) == result
    return result


def refused(root: Path, name: str, **args: Any) -> str:
    """The message of the WorkspaceError a call raises."""
    with pytest.raises(WorkspaceError) as caught:
        tools_of(root)[name].invoke(args)
    return str(caught.value)


def without_hanging(call: Callable[[], Any], fifo: Path) -> Any:
    """``call()``, failing (not hanging) should it open ``fifo`` and wait for a writer."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = call()
        except Exception as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():  # blocked in open(): give it a writer so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=10)
        pytest.fail(f"the tool opened the FIFO {fifo}")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


# -- the catalogue ------------------------------------------------------------------------------


def test_the_four_tools_are_built_from_the_catalogue(root: Path) -> None:
    tools = workspace_tools(root)
    assert [t.name for t in tools] == ["list_files", "file_exists", "read_file", "search_files"]
    assert sorted(workspace_tool_schemas()) == sorted(t.name for t in tools)
    for tool in tools:
        assert tool.args_schema is WORKSPACE_ARGUMENTS[tool.name]
        assert len(tool.description) > 100
        properties = workspace_tool_schemas()[tool.name]["properties"]
        assert all(len(p["description"]) > 20 for p in properties.values())
    assert workspace_tool_schemas()["read_file"]["required"] == ["path"]
    assert workspace_tool_schemas()["file_exists"]["required"] == ["path"]
    assert workspace_tool_schemas()["search_files"]["required"] == ["query"]
    assert "required" not in workspace_tool_schemas()["list_files"]


def test_the_always_present_catalogue_does_not_name_the_workspace_tools() -> None:
    assert sorted(builtin_tool_schemas()) == sorted(ARGUMENTS)
    assert not set(builtin_tool_schemas()) & set(WORKSPACE_ARGUMENTS)


def test_the_root_must_be_an_existing_directory(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        workspace_tools(tmp_path / "missing")
    (tmp_path / "file.txt").write_text("x", "utf-8")
    with pytest.raises(UsageError, match="is not a directory"):
        workspace_tools(tmp_path / "file.txt")


def test_a_root_given_through_a_link_works(root: Path, tmp_path: Path) -> None:
    (tmp_path / "root_link").symlink_to(root, target_is_directory=True)
    read = run(tmp_path / "root_link", "read_file", path="notes.txt")
    assert read["content"].startswith("first line")


# -- list_files ---------------------------------------------------------------------------------


def test_list_files_lists_the_root_sorted_with_types_and_sizes(root: Path) -> None:
    listed = run(root, "list_files")
    assert listed == {
        "entries": [
            {"path": "alias.txt", "type": "file", "size": len(NOTES)},
            {"path": "inner", "type": "dir"},
            {"path": "notes.txt", "type": "file", "size": len(NOTES)},
            {"path": "sub", "type": "dir"},
        ],
        "truncated": False,
    }
    assert run(root, "list_files", path=".") == listed
    assert run(root, "list_files", path="") == listed


def test_list_files_gives_paths_relative_to_the_root(root: Path) -> None:
    assert run(root, "list_files", path="sub")["entries"] == [
        {"path": "sub/deep", "type": "dir"},
        {"path": "sub/todo.md", "type": "file", "size": 23},
    ]
    assert run(root, "list_files", path="./sub//deep/")["entries"] == [
        {"path": "sub/deep/plan.txt", "type": "file", "size": 19},
    ]
    through_link = run(root, "list_files", path="inner")["entries"]
    assert [e["path"] for e in through_link] == ["inner/deep", "inner/todo.md"]
    for entry in through_link:  # every listed path works with the other tools
        if entry["type"] == "file":
            assert run(root, "read_file", path=entry["path"])["content"]


def test_list_files_is_bounded(root: Path) -> None:
    many = root / "many"
    many.mkdir()
    for i in range(MAX_LIST_ENTRIES + 3):
        (many / f"f{i:04d}.txt").touch()
    listed = run(root, "list_files", path="many")
    assert listed["truncated"] is True
    assert len(listed["entries"]) == MAX_LIST_ENTRIES
    assert listed["entries"][0] == {"path": "many/f0000.txt", "type": "file", "size": 0}
    assert listed["entries"][-1]["path"] == f"many/f{MAX_LIST_ENTRIES - 1:04d}.txt"
    (many / f"f{MAX_LIST_ENTRIES:04d}.txt").unlink()
    (many / f"f{MAX_LIST_ENTRIES + 1:04d}.txt").unlink()
    (many / f"f{MAX_LIST_ENTRIES + 2:04d}.txt").unlink()
    exactly = run(root, "list_files", path="many")
    assert (len(exactly["entries"]), exactly["truncated"]) == (MAX_LIST_ENTRIES, False)


@needs_fifo
def test_list_files_leaves_out_links_outside_broken_links_and_special_files(root: Path) -> None:
    os.mkfifo(root / "pipe")
    (root / "broken").symlink_to("nowhere")
    (root / "loop").symlink_to("loop")
    names = [e["path"] for e in run(root, "list_files")["entries"]]
    assert names == ["alias.txt", "inner", "notes.txt", "sub"]
    assert "sub/up" not in [e["path"] for e in run(root, "list_files", path="sub")["entries"]]


def test_list_files_refuses_a_file(root: Path) -> None:
    assert refused(root, "list_files", path="notes.txt") == (
        "path 'notes.txt' is a file, not a directory"
    )


# -- read_file ----------------------------------------------------------------------------------


def test_read_file_reads_a_whole_small_file(root: Path) -> None:
    assert run(root, "read_file", path="sub/todo.md") == {
        "path": "sub/todo.md",
        "content": "- buy milk\n- call Tama\n",
        "offset": 0,
        "total_chars": 23,
        "truncated": False,
    }


def test_read_file_reads_in_chunks(root: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(3000))  # 26890 characters
    (root / "long.txt").write_text(text, "utf-8")
    first = run(root, "read_file", path="long.txt")
    assert len(first["content"]) == READ_LIMIT
    assert (first["offset"], first["total_chars"], first["truncated"]) == (0, len(text), True)
    chunk = run(root, "read_file", path="long.txt", offset=10, limit=7)
    assert chunk["content"] == text[10:17]
    assert chunk["truncated"] is True
    pieces, offset = [], 0
    while True:  # what the description tells a model to do
        part = run(root, "read_file", path="long.txt", offset=offset, limit=5000)
        pieces.append(part["content"])
        offset += len(part["content"])
        if not part["truncated"]:
            break
    assert "".join(pieces) == text
    last = run(root, "read_file", path="long.txt", offset=len(text) - 3, limit=100)
    assert (last["content"], last["truncated"]) == (text[-3:], False)
    past = run(root, "read_file", path="long.txt", offset=len(text) + 50)
    assert (past["content"], past["total_chars"], past["truncated"]) == ("", len(text), False)


def test_read_file_counts_characters_of_utf8_and_replaces_invalid_bytes(root: Path) -> None:
    (root / "jp.txt").write_text("こんにちは、Mika。\r\nçava\n", "utf-8")
    whole = run(root, "read_file", path="jp.txt")
    assert whole["content"] == "こんにちは、Mika。\r\nçava\n"  # line endings kept
    assert whole["total_chars"] == 18
    assert run(root, "read_file", path="jp.txt", offset=3, limit=4)["content"] == "ちは、M"
    (root / "latin1.txt").write_bytes("café au lait".encode("latin-1"))
    assert run(root, "read_file", path="latin1.txt")["content"] == "caf\ufffd au lait"


def test_read_file_follows_links_that_stay_inside(root: Path) -> None:
    assert run(root, "read_file", path="alias.txt")["content"].startswith("first line")
    through_dir = run(root, "read_file", path="inner/deep/plan.txt")
    assert through_dir["path"] == "inner/deep/plan.txt"
    assert through_dir["content"] == "plan: call the vet\n"


def test_read_file_refuses_binary_files(root: Path) -> None:
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert refused(root, "read_file", path="image.png") == (
        "file 'image.png' is binary (it contains NUL bytes); only text files can be read"
    )


def test_read_file_refuses_an_over_size_file_by_its_size(root: Path) -> None:
    with (root / "huge.log").open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written, nothing need be read
    message = refused(root, "read_file", path="huge.log")
    assert message == (
        f"file 'huge.log' is too large to read: {MAX_FILE_BYTES + 1} bytes, the limit is "
        f"{MAX_FILE_BYTES} bytes"
    )


def test_read_file_refuses_a_directory(root: Path) -> None:
    assert refused(root, "read_file", path="sub") == "path 'sub' is a directory, not a file"
    assert refused(root, "read_file", path=".") == "path '.' is a directory, not a file"


def test_read_file_checks_offset_and_limit(root: Path) -> None:
    read = tools_of(root)["read_file"]
    with pytest.raises(ValidationError):
        read.invoke({"path": "notes.txt", "limit": MAX_READ_LIMIT + 1})
    with pytest.raises(ValidationError):
        read.invoke({"path": "notes.txt", "offset": -1})


# -- search_files -------------------------------------------------------------------------------


def test_search_files_finds_lines_case_insensitively_with_line_numbers(root: Path) -> None:
    found = run(root, "search_files", query="LINE", path="notes.txt")
    assert found == {
        "matches": [
            {"path": "notes.txt", "line": 1, "text": "first line"},
            {"path": "notes.txt", "line": 2, "text": "Second Line"},
            {"path": "notes.txt", "line": 3, "text": "third line"},
        ],
        "truncated": False,
    }


def test_search_files_walks_folders_in_path_order_each_file_once(root: Path) -> None:
    found = run(root, "search_files", query="call")
    # sub is reached first through the link `inner`; its files are not searched twice
    assert found["matches"] == [
        {"path": "inner/deep/plan.txt", "line": 1, "text": "plan: call the vet"},
        {"path": "inner/todo.md", "line": 2, "text": "- call Tama"},
    ]
    in_sub = run(root, "search_files", query="call", path="sub")
    assert [m["path"] for m in in_sub["matches"]] == ["sub/deep/plan.txt", "sub/todo.md"]
    assert run(root, "search_files", query="first")["matches"] == [
        {"path": "alias.txt", "line": 1, "text": "first line"},  # notes.txt is the same file
    ]


def test_search_files_is_plain_text_and_unicode_aware(root: Path) -> None:
    (root / "misc.txt").write_text("a.c\nabc\n(x)+\nL'ÉTÉ est là\n", "utf-8")
    assert [m["line"] for m in run(root, "search_files", query="a.c")["matches"]] == [1]
    assert [m["line"] for m in run(root, "search_files", query="(x)+")["matches"]] == [3]
    assert [m["text"] for m in run(root, "search_files", query="l'été")["matches"]] == [
        "L'ÉTÉ est là"
    ]
    assert run(root, "search_files", query="nothing like this") == {
        "matches": [],
        "truncated": False,
    }


def test_search_files_skips_links_outside_binary_and_over_size_files(root: Path) -> None:
    (root / "blob.bin").write_bytes(b"needle\x00\x01\x02")
    with (root / "big.txt").open("wb") as f:
        f.write(b"needle\n" + b"x" * 10_000 + b"\n")
        f.truncate(MAX_FILE_BYTES + 1)
    (root / "ok.txt").write_text("a needle here\n", "utf-8")
    (root / "outside_needle").symlink_to(root.parent / "outside" / "secret.txt")
    (root.parent / "outside" / "n.txt").write_text("needle outside\n", "utf-8")
    found = run(root, "search_files", query="needle")
    assert found["matches"] == [{"path": "ok.txt", "line": 1, "text": "a needle here"}]
    assert run(root, "search_files", query=SECRET)["matches"] == []
    assert refused(root, "search_files", query="needle", path="big.txt").startswith(
        "file 'big.txt' is too large to read"
    )


def test_search_files_survives_a_loop_of_links(root: Path) -> None:
    (root / "sub" / "again").symlink_to("..", target_is_directory=True)
    (root / "sub" / "self").symlink_to("self")
    found = run(root, "search_files", query="vet")
    assert found["matches"] == [
        {"path": "inner/deep/plan.txt", "line": 1, "text": "plan: call the vet"}
    ]


def test_search_files_bounds_matches_and_line_length(root: Path) -> None:
    (root / "many.txt").write_text("hit\n" * (MAX_MATCHES + 5), "utf-8")
    found = run(root, "search_files", query="hit", path="many.txt")
    assert len(found["matches"]) == MAX_MATCHES
    assert found["truncated"] is True
    assert found["matches"][-1]["line"] == MAX_MATCHES
    long_line = "a" * 5000 + "NEEDLE" + "b" * 5000
    (root / "min.js").write_text(long_line + "\n", "utf-8")
    [match] = run(root, "search_files", query="needle", path="min.js")["matches"]
    assert len(match["text"]) == MAX_LINE_CHARS
    assert "NEEDLE" in match["text"]
    assert match["text"].startswith("…") and match["text"].endswith("…")


# -- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["list_files", "read_file", "search_files"])
@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../secret.txt", "path '../secret.txt' leaves the workspace: '..' components"),
        ("sub/../../secret.txt", "path 'sub/../../secret.txt' leaves the workspace: '..'"),
        ("sub/../notes.txt", "path 'sub/../notes.txt' is refused: '..' components are not"),
        ("..", "path '..' leaves the workspace: '..' components are not allowed"),
        ("/etc/passwd", "path '/etc/passwd' leaves the workspace: absolute paths"),
        ("//etc", "path '//etc' leaves the workspace: absolute paths are not allowed"),
        ("out", "path 'out' leaves the workspace: 'out' is a symbolic link to a place outside"),
        ("out/secret.txt", "path 'out/secret.txt' leaves the workspace: 'out' is a symbolic"),
        ("sub/up", "path 'sub/up' leaves the workspace: 'sub/up' is a symbolic link"),
        ("inner/up/secret.txt", "path 'inner/up/secret.txt' leaves the workspace: 'inner/up'"),
        ("secret_link", "path 'secret_link' leaves the workspace: 'secret_link' is a symbolic"),
        ("missing.txt", "no such file or directory in the workspace: 'missing.txt'"),
        ("sub/nope/x.txt", "no such file or directory in the workspace: 'sub/nope/x.txt'"),
        ("notes.txt/x", "no such file or directory in the workspace: 'notes.txt/x' ('notes"),
        ("a\0b", "path 'a\\x00b' is refused: it contains a NUL character"),
    ],
)
def test_every_tool_refuses_paths_out_of_the_workspace(
    root: Path, name: str, path: str, message: str
) -> None:
    args: dict[str, Any] = {"path": path}
    if name == "search_files":
        args["query"] = "secret"
    assert refused(root, name, **args).startswith(message)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../secret.txt", "path '../secret.txt' leaves the workspace: '..' components"),
        ("/etc/passwd", "path '/etc/passwd' leaves the workspace: absolute paths"),
        ("out/secret.txt", "path 'out/secret.txt' leaves the workspace: 'out' is a symbolic"),
        ("secret_link", "path 'secret_link' leaves the workspace: 'secret_link' is a symbolic"),
        ("a\0b", "path 'a\\x00b' is refused: it contains a NUL character"),
    ],
)
def test_file_exists_refuses_paths_out_of_the_workspace(
    root: Path, path: str, message: str
) -> None:
    assert refused(root, "file_exists", path=path).startswith(message)


def test_file_exists_answers_for_files_folders_and_missing_paths(root: Path) -> None:
    assert run(root, "file_exists", path="sub/todo.md") == {
        "path": "sub/todo.md", "exists": True, "type": "file", "size": 23}
    assert run(root, "file_exists", path="inner/deep") == {
        "path": "inner/deep", "exists": True, "type": "dir"}  # through a link inside
    for missing in ("sub/nope.md", "nope/deeper/x.md"):
        assert run(root, "file_exists", path=missing) == {
            "path": missing, "exists": False, "type": None}


def test_the_absolute_path_of_a_file_inside_is_refused_too(root: Path) -> None:
    assert "absolute paths are not allowed" in refused(
        root, "read_file", path=str(root / "notes.txt")
    )


def test_a_broken_link_out_does_not_tell_whether_its_target_exists(root: Path) -> None:
    (root / "probe").symlink_to(root.parent / "outside" / "no_such_file")
    assert refused(root, "read_file", path="probe") == (
        "path 'probe' leaves the workspace: 'probe' is a symbolic link to a place outside it"
    )
    (root / "dangling").symlink_to("no_such_file")
    assert refused(root, "read_file", path="dangling") == (
        "no such file or directory in the workspace: 'dangling'"
    )


@needs_fifo
@pytest.mark.parametrize("name", ["read_file", "search_files", "list_files"])
def test_a_fifo_is_never_opened(root: Path, name: str) -> None:
    fifo = root / "pipe"
    os.mkfifo(fifo)
    args: dict[str, Any] = {"path": "pipe"}
    if name == "search_files":
        args["query"] = "x"
    with pytest.raises(WorkspaceError) as caught:
        without_hanging(lambda: tools_of(root)[name].invoke(args), fifo)
    assert str(caught.value).startswith("path 'pipe' is a FIFO (a special file, never opened)")
    (root / "pipe_link").symlink_to("pipe")
    with pytest.raises(WorkspaceError, match="is a FIFO"):
        without_hanging(lambda: tools_of(root)["read_file"].invoke({"path": "pipe_link"}), fifo)
    searched = without_hanging(lambda: run(root, "search_files", query="line"), fifo)
    assert {m["path"] for m in searched["matches"]} == {"alias.txt"}


# -- through the tool box -----------------------------------------------------------------------


def test_through_the_tool_box_a_refusal_is_a_tool_failure_with_the_message(root: Path) -> None:
    box = ToolBox(workspace_tools(root))

    async def call(name: str, args: dict[str, Any]) -> Any:
        return await box.invoke(name, args, playbook="pb", node="n")

    read = asyncio.run(call("read_file", {"path": "notes.txt", "limit": 5}))
    assert read["content"] == "first"
    with pytest.raises(ToolFailed) as caught:
        asyncio.run(call("read_file", {"path": "../secret.txt"}))
    failure = caught.value
    assert failure.code == "SEA532"
    assert isinstance(failure.__cause__, WorkspaceError)
    assert failure.detail == (
        "tool 'read_file' failed: WorkspaceError: path '../secret.txt' leaves the workspace: "
        "'..' components are not allowed; give a path relative to the workspace root"
    )
    assert str(failure).startswith("pb.n: tool 'read_file' failed")
    with pytest.raises(ToolFailed, match="symbolic link to a place outside it"):
        asyncio.run(call("list_files", {"path": "out"}))
    with pytest.raises(ToolFailed, match="no such file or directory in the workspace"):
        asyncio.run(call("search_files", {"query": "x", "path": "gone"}))
    with pytest.raises(ToolArgumentError, match="argument 'limit'"):
        asyncio.run(call("read_file", {"path": "notes.txt", "limit": MAX_READ_LIMIT + 1}))
    with pytest.raises(ToolArgumentError, match="argument 'query'"):
        asyncio.run(call("search_files", {"query": ""}))


# -- the property -------------------------------------------------------------------------------

_PIECES = [
    "..",
    ".",
    "",
    "...",
    "root",
    "outside",
    "secret.txt",
    "notes.txt",
    "sub",
    "inner",
    "up",
    "out",
    "secret_link",
    "alias.txt",
    "~",
    "/",
    "\\",
    "..\\..",
    "%2e%2e",
    "\0",
]


def _path_strings() -> st.SearchStrategy[str]:
    joined = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6).map("/".join)
    return st.one_of(joined, st.text(max_size=40), joined.map(lambda p: "/" + p))


def test_no_path_reads_a_file_outside_the_root(root: Path) -> None:
    read = tools_of(root)["read_file"]

    @settings(max_examples=400, deadline=None)
    @given(path=_path_strings())
    def reads_only_inside(path: str) -> None:
        try:
            result = read.invoke({"path": path})
        except (WorkspaceError, ValidationError):
            return
        assert SECRET not in result["content"]

    reads_only_inside()
    assert SECRET in (root.parent / "secret.txt").read_text("utf-8")  # the bait is there
