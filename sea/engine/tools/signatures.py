"""The built-in tools' names and arguments, without the tools (and without LangChain), so
that ``sea validate`` knows them and stays quick to start.

Two catalogues: :data:`ARGUMENTS`, the tools every runtime has (:func:`builtin_tool_schemas`),
and :data:`WORKSPACE_ARGUMENTS`, the workspace tools a runtime has only when its host gives it
a workspace directory (:func:`workspace_tool_schemas`;
:func:`sea.engine.tools.workspace.workspace_tools` builds them from these same models)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

MAX_LIMIT = 50


class _NoArgs(BaseModel):
    pass


class _SearchArgs(BaseModel):
    query: str = Field(min_length=1, description="Words to look for (any language).")
    limit: int = Field(default=5, ge=1, le=MAX_LIMIT, description="How many messages at most.")
    tags: list[str] | None = Field(
        default=None, description="Only messages with all of these tags, e.g. `conversation`."
    )
    match: Literal["any", "all"] = Field(
        default="any",
        description="`any` (default, for natural language such as a question): messages "
        "with at least one of the words, rare words first, punctuation ignored. `all`: "
        "messages with every word, exactly as written.",
    )


class _RecentArgs(BaseModel):
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT, description="How many messages at most.")


ARGUMENTS: dict[str, type[BaseModel]] = {
    "list_available_playbooks": _NoArgs,
    "memory_search": _SearchArgs,
    "memory_recent": _RecentArgs,
}
"""Built-in tool name → its arguments (one entry per tool :func:`builtin_tools` makes)."""


def builtin_tool_schemas() -> dict[str, dict[str, Any]]:
    """Name → argument JSON Schema of every built-in tool (the validator's catalogue)."""
    return {name: model.model_json_schema() for name, model in ARGUMENTS.items()}


READ_LIMIT = 8000
"""``read_file``'s default chunk, in characters."""
MAX_READ_LIMIT = 100_000
"""The largest chunk ``read_file`` returns, in characters."""

_PATH = (
    "A path relative to the workspace root, with `/` between folders, e.g. `notes/todo.md`; "
    "`.` is the root itself. Absolute paths and `..` are refused."
)


class _ListFilesArgs(BaseModel):
    path: str = Field(
        default=".",
        description="The folder to list (default `.`, the workspace root). " + _PATH,
    )


class _ReadFileArgs(BaseModel):
    path: str = Field(
        min_length=1,
        description="The file to read (a path a listing or a search gave). " + _PATH,
    )
    offset: int = Field(
        default=0,
        ge=0,
        description="The character where the chunk starts (0, the default, is the beginning). "
        "To read on after a truncated chunk, pass the previous offset plus the length of "
        "its content.",
    )
    limit: int = Field(
        default=READ_LIMIT,
        ge=1,
        le=MAX_READ_LIMIT,
        description=f"How many characters to return at most (default {READ_LIMIT}, at most "
        f"{MAX_READ_LIMIT}).",
    )


class _SearchFilesArgs(BaseModel):
    query: str = Field(
        min_length=1,
        description="The text to look for, on one line: plain text (not a regular expression), "
        "case-insensitive, e.g. `deadline` or `def main(`.",
    )
    path: str = Field(
        default=".",
        description="Where to search: a folder (searched with all its subfolders; default `.`, "
        "the whole workspace) or a single file. " + _PATH,
    )


WORKSPACE_ARGUMENTS: dict[str, type[BaseModel]] = {
    "list_files": _ListFilesArgs,
    "read_file": _ReadFileArgs,
    "search_files": _SearchFilesArgs,
}
"""Workspace tool name → its arguments (one entry per tool
:func:`sea.engine.tools.workspace.workspace_tools` makes). Not in :data:`ARGUMENTS`: these
tools exist only when the host gives a workspace."""


def workspace_tool_schemas() -> dict[str, dict[str, Any]]:
    """Name → argument JSON Schema of every workspace tool (for a validator whose runtime has a
    workspace; :func:`builtin_tool_schemas` leaves them out)."""
    return {name: model.model_json_schema() for name, model in WORKSPACE_ARGUMENTS.items()}
