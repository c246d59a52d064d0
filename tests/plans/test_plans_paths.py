"""Workspace.locate(missing_ok=True): the confinement helper of the workspace tools, for
paths about to be made."""

from __future__ import annotations

from pathlib import Path

import pytest

from sea.engine.tools.workspace import Workspace, WorkspaceError


def test_a_missing_path_is_located_inside_the_root(workspace: Path) -> None:
    (workspace / "real").mkdir()
    (workspace / "link").symlink_to(workspace / "real")
    found = Workspace(workspace)
    real, shown, info = found.locate("link/new/deeper.txt", missing_ok=True)
    assert (real, shown, info) == (workspace / "real" / "new" / "deeper.txt",
                                   "link/new/deeper.txt", None)
    real, _, info = found.locate("real", missing_ok=True)
    assert real == workspace / "real" and info is not None
    with pytest.raises(WorkspaceError, match="no such file or directory"):
        found.locate("link/new")


@pytest.mark.parametrize(
    ("path", "problem"),
    [("../x", "leaves the workspace"), ("/tmp/x", "absolute paths"),
     ("out/x", "symbolic link to a place outside"), ("dead/x", "leads nowhere"),
     ("file.txt/x", "is a file, not a directory")],
)
def test_missing_paths_are_still_confined(
    workspace: Path, outside: Path, path: str, problem: str
) -> None:
    (workspace / "out").symlink_to(outside)
    (workspace / "dead").symlink_to(workspace / "gone")
    (workspace / "file.txt").write_text("x")
    with pytest.raises(WorkspaceError, match=problem):
        Workspace(workspace).locate(path, missing_ok=True)
