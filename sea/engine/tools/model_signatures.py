"""The arguments of the seed 003 built-in tools (:mod:`sea.engine.tools.model_tools`),
without the tools and without LangChain, so that ``sea validate`` knows them and stays
quick to start."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from saimemory.pins import MAX_PIN_CHARS

MAX_SUMMARY_MESSAGES = 100
"""The most conversation messages ``summarize_conversation`` reads."""
MAX_EXTRACT_CHARS = 50_000
"""The longest text ``extract`` takes."""


class _PinArgs(BaseModel):
    text: str = Field(
        min_length=1, max_length=MAX_PIN_CHARS,
        description="One fact, goal or preference to keep in mind in every conversation, "
        "in one short sentence.",
    )


class _UnpinArgs(BaseModel):
    id: int = Field(ge=1, description="The id of the pinned item to drop (pin_item gave it).")


class _SummarizeArgs(BaseModel):
    limit: int = Field(
        default=20, ge=1, le=MAX_SUMMARY_MESSAGES,
        description="How many of the newest conversation messages to summarize.",
    )
    focus: str | None = Field(
        default=None, max_length=200, description="What the summary should keep above all."
    )


class _ExtractArgs(BaseModel):
    text: str = Field(
        min_length=1, max_length=MAX_EXTRACT_CHARS, description="The text to extract from."
    )
    what: str = Field(
        min_length=1, max_length=500,
        description="What to take from it, e.g. `every date and what happens then`.",
    )


class _GenerateArgs(BaseModel):
    request: str = Field(
        min_length=1, max_length=2000,
        description="What to write, e.g. `a README for the game, with how to play it`.",
    )
    material: str | None = Field(
        default=None, max_length=MAX_EXTRACT_CHARS,
        description="Text to write it from (notes, a file's content), if any.",
    )


class _JudgeArgs(BaseModel):
    intent: dict[str, Any] = Field(
        description="The intent as sub_intent's model answered it (action_type, complexity, "
        "confidence, reasoning, ...)."
    )


MODEL_TOOL_ARGUMENTS: dict[str, type[BaseModel]] = {
    "pin_item": _PinArgs,
    "unpin_item": _UnpinArgs,
    "summarize_conversation": _SummarizeArgs,
    "extract": _ExtractArgs,
    "generate_content": _GenerateArgs,
    "judge_intent": _JudgeArgs,
}
"""Tool name → its arguments (one entry per tool :func:`model_tools` makes)."""


def model_tool_schemas() -> dict[str, dict[str, Any]]:
    """Name → argument JSON Schema of each of these tools (for ``sea validate``)."""
    return {name: model.model_json_schema() for name, model in MODEL_TOOL_ARGUMENTS.items()}


