"""The built-in tools' names and arguments, without the tools (and without LangChain), so
that ``sea validate`` knows them and stays quick to start.

Three catalogues: :data:`ARGUMENTS`, the tools every runtime has (:func:`builtin_tool_schemas`);
:data:`WORKSPACE_ARGUMENTS`, the workspace tools a runtime has only when its host gives it
a workspace directory (:func:`workspace_tool_schemas`;
:func:`sea.engine.tools.workspace.workspace_tools` builds them from these same models); and
:data:`PLAN_ARGUMENTS`, the plan tools, present with a workspace too
(:func:`plan_tool_schemas`; :mod:`sea.engine.plans.tools` builds them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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


class _RankArgs(BaseModel):
    query: str = Field(description="The user's message (any language).")
    max_candidates: int = Field(
        default=3, ge=1, le=MAX_LIMIT,
        description="How many playbooks at most are left for the model to choose among "
        "(the safe choice, basic_chat, is added when it is not among them).",
    )
    keep_fallback: bool = Field(
        default=False,
        description="Keep the safe choice, basic_chat, among the candidates even when the prior "
        "is sure (so the model is asked): after a playbook ran this turn, its results may "
        "already answer.",
    )


class _SpotArgs(BaseModel):
    query: str = Field(description="The user's message (any language).")


ARGUMENTS: dict[str, type[BaseModel]] = {
    "list_available_playbooks": _NoArgs,
    "rank_playbooks": _RankArgs,
    "spot_file_question": _SpotArgs,
    "memory_search": _SearchArgs,
    "memory_recent": _RecentArgs,
    "plan_memory": _NoArgs,
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


class _FileExistsArgs(BaseModel):
    path: str = Field(min_length=1, description="The file or folder to look for. " + _PATH)


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
    "file_exists": _FileExistsArgs,
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




def _plan_id() -> Any:
    return Field(
        min_length=1, max_length=200,
        description="The plan's id (what plan_propose returned as plan_id).",
        json_schema_extra={"x-sea-ref": ["plan_id"]},  # a ref gives its plan_id
    )


class _PlanSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["create", "write", "mkdir", "read", "analyze", "run", "delete"] = Field(
        description="`create` a new file, `write` (overwrite) a file, `mkdir` a folder, "
        "`read` a file, `analyze` (think, no change), `run` an allowed command, `delete` a "
        "file or an empty folder."
    )
    path: str = Field(default="", description="The file or folder. " + _PATH)
    content: str | None = Field(
        default=None,
        description="The whole text a `create` or `write` puts in the file; for `run`, the "
        "command line. Leave it out for the other kinds.",
    )
    description: str = Field(default="", max_length=500, description="What the step is for.")
    optional: bool = Field(default=False, description="The plan goes on if this step fails.")


class _PlanSelection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    all: bool = Field(default=False, description="Every spec of the plan.")
    ids: list[str] = Field(default_factory=list, description="The spec ids, e.g. [\"1\", \"3\"].")


class _ProposeArgs(BaseModel):
    title: str = Field(min_length=1, max_length=200, description="A short title of the plan.")
    content: str = Field(
        max_length=20_000, description="The plan itself: its goal and its steps, in words."
    )
    rationale: str = Field(default="", max_length=2000, description="Why this plan.")
    tags: list[str] = Field(default_factory=list, description="Labels, e.g. `game`.")


class _SetSpecsArgs(BaseModel):
    plan_id: str = _plan_id()
    specs: list[_PlanSpec] = Field(
        min_length=1, max_length=100,
        description="The concrete steps, in order (they replace any earlier specs).",
    )


class _PreviewArgs(BaseModel):
    plan_id: str = _plan_id()
    selection: _PlanSelection | None = Field(
        default=None, description="Which specs (default: the plan's selection, else all)."
    )


class _RequestApprovalArgs(BaseModel):
    plan_id: str = _plan_id()
    selection: _PlanSelection = Field(
        default_factory=lambda: _PlanSelection(all=True),
        description="Which specs to ask about (default: all).",
    )
    reason: str = Field(default="", max_length=500, description="Why they should be approved.")


class _PlanIdArgs(BaseModel):
    plan_id: str = _plan_id()


class _StepArgs(BaseModel):
    step_id: str = Field(
        min_length=1, max_length=300,
        description="A step id, `<plan_id>:<spec id>` (the first_step_id of "
        "plan_set_action_specs or plan_get_state).",
        json_schema_extra={"x-sea-ref": ["step_id", "first_step_id"],
                           "x-sea-ref-lookup": {"plan_id": "plan_get_state"}},
    )


class _ListPlansArgs(BaseModel):
    status: Literal[
        "proposed", "pending_review", "approved", "scheduled", "executing", "completed",
        "aborted",
    ] | None = Field(default=None, description="Only plans in this status.")


class _MarkPendingArgs(BaseModel):
    plan_id: str = _plan_id()
    pending: bool = Field(
        default=True,
        description="true: queue the approved plan for later; false: take it off the queue.",
    )


PLAN_ARGUMENTS: dict[str, type[BaseModel]] = {
    "plan_propose": _ProposeArgs,
    "plan_set_action_specs": _SetSpecsArgs,
    "plan_preview": _PreviewArgs,
    "plan_request_approval": _RequestApprovalArgs,
    "plan_execute": _PlanIdArgs,
    "plan_get_state": _PlanIdArgs,
    "plan_get_step": _StepArgs,
    "plan_get_current": _NoArgs,
    "plan_list": _ListPlansArgs,
    "plan_mark_pending": _MarkPendingArgs,
    "plan_clear_current": _NoArgs,
}
"""Plan tool name → its arguments (one entry per tool :mod:`sea.engine.plans.tools` makes).
Present, like the workspace tools, only when the host gives a workspace."""


def plan_tool_schemas() -> dict[str, dict[str, Any]]:
    """Name → argument JSON Schema of every plan tool (for a validator whose runtime has a
    workspace)."""
    return {name: model.model_json_schema() for name, model in PLAN_ARGUMENTS.items()}
