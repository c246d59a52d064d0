"""The ``spot_file_question`` tool: the structural rule of :mod:`sea.engine.tools.file_prior`
over the workspace's real paths.

It answers ``{call, operation, path, reason}``: ``call`` is the ``file_exists`` or
``list_files`` call that answers the user's message (``{name, args, id}``, what a
``tool_call`` node runs) when the message is a simple file question, else null (and
``operation`` and ``path`` with it). Without a workspace it is always null: there is nothing
to ask about. A playbook runs it before asking any model (``meta_intent``); it is not meant
to be offered to a model.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool

from sea.engine.tools.beneath import WorkspaceError
from sea.engine.tools.engine_tool import engine_tool
from sea.engine.tools.file_prior import Kind, may_ask, real_names, spot
from sea.engine.tools.signatures import ARGUMENTS
from sea.engine.tools.workspace import Workspace

MAX_FOLDERS = 50
"""The most folders of the workspace root whose entries the rule matches by name."""


class _Refused(Exception):
    """A path the message names that the workspace refuses (a link leading outside...)."""


def spot_file_question_tool(workspace: Workspace | None) -> BaseTool:
    """The tool, over ``workspace`` (None: the host gave none)."""

    def run(query: str) -> dict[str, Any]:
        if workspace is None:
            return _answer(None, "no workspace")
        if not may_ask(query):  # chat: the workspace is not listed for it
            return _answer(None, "not a simple file question")
        try:
            found = spot(query, _names(workspace), lambda path: _kind(workspace, path))
        except _Refused as exc:
            return _answer(None, f"a path the workspace refuses: {exc}")
        if found is None:
            return _answer(None, "not a simple file question")
        return {"call": found.call, "operation": found.operation, "path": found.path,
                "reason": found.reason}

    return engine_tool(
        func=run, name="spot_file_question",
        description="Tell whether the user's message is a simple file question (is there a "
        "file, what a folder holds) and, if so, the file_exists or list_files call that "
        "answers it, chosen from the message and the workspace's real paths without a model.",
        args_schema=ARGUMENTS["spot_file_question"],
    )


def _answer(call: None, reason: str) -> dict[str, Any]:
    return {"call": call, "operation": None, "path": None, "reason": reason}


def _names(workspace: Workspace) -> list[str]:
    """The paths of the root's entries and of the entries of its first folders."""
    entries = _entries(workspace, ".")
    folders = [path for path, kind in entries if kind == "dir"][:MAX_FOLDERS]
    for folder in folders:
        entries.extend(_entries(workspace, folder))
    return real_names(entries)


def _entries(workspace: Workspace, folder: str) -> list[tuple[str, str]]:
    try:
        listed = workspace.list_files(folder)["entries"]
    except (WorkspaceError, OSError):
        return []  # a folder that cannot be listed offers no names
    return [(entry["path"], entry["type"]) for entry in listed]


def _kind(workspace: Workspace, path: str) -> Kind | None:
    try:
        found = workspace.file_exists(path)
    except (WorkspaceError, OSError) as exc:
        raise _Refused(str(exc)) from exc
    kind = found.get("type")
    return kind if kind in ("file", "dir") else None
