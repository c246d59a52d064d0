"""The built-in tools' names and arguments, without the tools (and without LangChain), so
that ``sea validate`` knows them and stays quick to start."""

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
