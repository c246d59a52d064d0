"""A workspace folder swapped for a symbolic link to an outside folder while the workspace
tools read, list and search never lets outside content through: every path is walked one
component at a time from the root's descriptor (``sea.engine.tools.beneath``), so a swap
makes the call fail, never follow the link. The swapping runs in a process of its own, a
bounded number of times, beside the calls (a thread would take turns with them). End to
end, ``sea run --workspace`` refuses a path through a linked outside folder with a routed
error."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import orjson
import pytest

from sea.engine.tools.workspace import Workspace, WorkspaceError
from tests.trace.conftest import Sea

SWAPS = 1000
"""How many times the swapping process replaces the folder by a link and back."""
SECRET = "SECRET-OUTSIDE"


@pytest.fixture
def sea(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Sea:
    """``sea`` with ``SEA_HOME`` and ``SEA_DB`` pointing into ``tmp_path``."""
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SEA_DB", str(tmp_path / "home" / "memory.sqlite"))
    return Sea(tmp_path, capsys)


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with ``docs/note.txt`` and an outside folder with a file of the same name
    (and one more) holding :data:`SECRET`."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "docs").mkdir(parents=True)
    (workspace / "docs" / "note.txt").write_text("inside text\n", encoding="utf-8")
    outside.mkdir()
    (outside / "note.txt").write_text(f"{SECRET} note\n", encoding="utf-8")
    (outside / f"{SECRET}.txt").write_text(f"{SECRET} more text\n", encoding="utf-8")
    return workspace, outside


SWAPPER = """
import os, sys
folder, aside, outside, swaps = sys.argv[1:]
print("ready", flush=True)
for _ in range(int(swaps)):
    os.rename(folder, aside)
    os.symlink(outside, folder, target_is_directory=True)
    os.unlink(folder)
    os.rename(aside, folder)
"""
"""Swaps a folder for a link to an outside folder and back, a given number of times (in a
process of its own, so that it runs beside the calls, not in turns with them)."""


def while_swapped(
    workspace: Path, outside: Path, call: Callable[[], object]
) -> tuple[list[str], list[str]]:
    """The results (as JSON text) of ``call`` made again and again while another process
    swaps ``docs`` for a link to ``outside`` and back :data:`SWAPS` times, and the calls
    that failed otherwise than with a :class:`WorkspaceError` (a refusal)."""
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(workspace / "docs"), str(workspace / "docs.aside"),
         str(outside), str(SWAPS)], stdout=subprocess.PIPE, text=True)
    results, unexpected = [], []
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        while swapper.poll() is None:
            try:
                results.append(orjson.dumps(call()).decode())
            except WorkspaceError:
                continue
            except Exception as exc:  # kept, to be reported by the test
                unexpected.append(repr(exc))
    finally:
        swapper.kill()
        swapper.wait()
    assert swapper.returncode == 0
    results.append(orjson.dumps(call()).decode())  # the folder is back: the call works
    return results, unexpected


def test_read_file_never_returns_an_outside_file_while_a_folder_is_swapped(
    places: tuple[Path, Path],
) -> None:
    # before: the outside note was returned (the no-follow flag guarded the last component
    # only), and the swap also surfaced as raw FileNotFoundErrors from os.path.realpath
    workspace, outside = places
    tools = Workspace(workspace)
    read = partial(tools.read_file, "docs/note.txt")
    results, unexpected = while_swapped(workspace, outside, read)
    assert [r for r in results if SECRET in r] == []
    assert unexpected == []
    assert "inside text" in results[-1]


def test_search_files_never_finds_outside_lines_while_a_folder_is_swapped(
    places: tuple[Path, Path],
) -> None:
    # before: lines of the outside files were returned
    workspace, outside = places
    tools = Workspace(workspace)
    results, unexpected = while_swapped(workspace, outside, lambda: tools.search_files("text"))
    assert [r for r in results if SECRET in r] == []
    assert unexpected == []
    assert "docs/note.txt" in results[-1]


def test_list_files_never_lists_an_outside_folder_while_it_is_swapped(
    places: tuple[Path, Path],
) -> None:
    # before: the outside folder's names were listed
    workspace, outside = places
    tools = Workspace(workspace)
    results, unexpected = while_swapped(workspace, outside, lambda: tools.list_files("docs"))
    assert [r for r in results if SECRET in r] == []
    assert unexpected == []
    assert "docs/note.txt" in results[-1]


def test_links_that_stay_inside_still_work_and_those_that_leave_are_refused(
    places: tuple[Path, Path],
) -> None:
    workspace, outside = places
    (workspace / "alias").symlink_to("docs")  # relative, inside
    (workspace / "docs" / "up").symlink_to("../docs/note.txt")  # '..' that stays inside
    (workspace / "absolute").symlink_to(workspace / "docs")  # absolute, inside
    (workspace / "away").symlink_to(outside)
    (workspace / "docs" / "climb").symlink_to("../../outside/note.txt")
    (workspace / "loop").symlink_to("loop")
    tools = Workspace(workspace)
    for path in ("alias/note.txt", "docs/up", "absolute/note.txt"):
        assert tools.read_file(path)["content"] == "inside text\n", path
    for path in ("away/note.txt", "docs/climb"):
        with pytest.raises(WorkspaceError, match="leaves the workspace"):
            tools.read_file(path)
    with pytest.raises(WorkspaceError, match="more than 40 symbolic links"):
        tools.read_file("loop")
    listed = {e["path"] for e in tools.list_files(".")["entries"]}
    assert listed == {"absolute", "alias", "docs"}  # away, loop: left out


READER = {
    "name": "read_one",
    "description": "Reads one workspace file and says what it holds.",
    "start_node": "read",
    "nodes": [
        {"id": "read", "type": "tool", "action": "read_file", "args": {"path": "{input}"},
         "output_key": "file", "next": "say", "error_next": "refused"},
        {"id": "say", "type": "speak", "action": "read: {file}"},
        {"id": "refused", "type": "speak", "action": "{error.code}: {error.message}"},
    ],
}


def test_sea_run_refuses_a_path_through_a_linked_outside_folder(
    sea: Sea, places: tuple[Path, Path]
) -> None:
    workspace, outside = places
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    books = sea.root / "books"
    books.mkdir()
    (books / "read_one.json").write_bytes(orjson.dumps(READER))

    def run(path: str) -> str:
        done = sea("run", "read_one", "--input", path, "--workspace", str(workspace),
                   "--playbooks", str(books), "--model", sea.script({"default": []}), "--json")
        assert done.code == 0, done.err
        assert "Traceback" not in done.err
        (spoken,) = orjson.loads(done.out)["spoken"]
        assert isinstance(spoken, str)
        return spoken

    refused = run("linked/note.txt")
    assert SECRET not in refused
    assert "leaves the workspace" in refused and "'linked'" in refused
    assert "inside text" in run("docs/note.txt")
