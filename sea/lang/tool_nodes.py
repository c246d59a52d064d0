"""The node types that call a tool: ``tool`` (a named tool with arguments) and ``tool_call``
(the call an ``llm`` node chose)."""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field

from sea.lang.locate import escape_pointer
from sea.lang.node import (
    Defined,
    FallibleNode,
    PlaybookIndex,
    Read,
    Unknown,
    key_read,
    keys_defined,
    nested_reads,
)
from sea.lang.uses import ToolUse

_TOOL_NAME = "the tool name is `action`"


class ToolNode(FallibleNode):
    """Call a named tool with arguments."""

    type: Literal["tool"] = Field(description="Node type: call a tool.")
    action: str = Field(description="Name of the tool to call.")
    args: dict[str, Any] | None = Field(
        default=None,
        description="Arguments; string values are templates (`{var}`; a string that is exactly "
        "one reference keeps the value's type).",
    )
    args_input: dict[str, Any] | None = Field(
        default=None,
        description="Legacy arguments: every string value is a state path (`a.b.0`), other "
        "values are literals. Prefer `args`.",
    )
    output_key: str | None = Field(
        default=None, description="State key that receives the tool's result."
    )
    output_keys: list[str] | None = Field(
        default=None,
        description="State keys for the elements of a tuple result, in order.",
    )
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")

    mermaid_shape: ClassVar[tuple[str, str]] = ("[/", "/]")
    known_mistakes: ClassVar[Mapping[str, str]] = {
        "tool": _TOOL_NAME,
        "name": _TOOL_NAME,
        "tool_name": _TOOL_NAME,
        "arguments": "did you mean `args`?",
        "params": "did you mean `args`?",
    }

    def tools_needed(self) -> list[str]:
        """The tool it calls."""
        return [self.action]

    def tools_named(self) -> Iterator[ToolUse]:
        """The tool it calls, with ``args`` (values) and ``args_input`` (state paths)."""
        arguments = {"args": self.args, "args_input": self.args_input}
        missing_at = ("args",) if self.args is not None else ("action",)
        yield ToolUse(self.action, ("action",), arguments, frozenset({"args"}), missing_at)

    def field_reads(self, base: str) -> Iterator[Read]:
        """The argument templates' variables and the legacy ``args_input`` paths."""
        yield from nested_reads(self.args, f"{base}/args", self.id)
        for key, value in (self.args_input or {}).items():
            if isinstance(value, str):
                yield from key_read(value, f"{base}/args_input/{escape_pointer(key)}", self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """``output_key`` and ``output_keys``."""
        return keys_defined(self.id, self.output_key, *(self.output_keys or []))

    def detail(self) -> str | None:
        """The tool's name."""
        return self.action


class ToolCallNode(FallibleNode):
    """Run the tool call an `llm` node chose."""

    type: Literal["tool_call"] = Field(description="Node type: run the tool call an llm chose.")
    call_source: str = Field(
        default="fc",
        description="State key holding the chosen call `{name, args}` (the llm node's "
        "`function_call` output key).",
    )
    output_key: str | None = Field(
        default=None, description="State key that receives the tool's result."
    )
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")

    mermaid_shape: ClassVar[tuple[str, str]] = ("[/", "/]")

    def field_reads(self, base: str) -> Iterator[Read]:
        """The state key holding the chosen call."""
        return key_read(self.call_source, f"{base}/call_source", self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """``output_key``."""
        return keys_defined(self.id, self.output_key)
