"""The tools a runtime may call, by name, with argument checks before every call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from sea.engine.tools.arguments import prepare_arguments, tool_schema
from sea.errors import ToolFailed, ToolNotFound, UsageError


class ToolBox:
    """langchain-core tools by name.

    Args:
        tools: The tools; names must be unique.

    Raises:
        UsageError: two tools share a name.
    """

    def __init__(self, tools: Iterable[BaseTool] = ()) -> None:
        self._tools: dict[str, BaseTool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise UsageError(f"two tools are named {tool.name!r}; tool names must be unique")
            self._tools[tool.name] = tool

    def names(self) -> list[str]:
        """The tool names, sorted."""
        return sorted(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str, *, playbook: str | None = None, node: str | None = None) -> BaseTool:
        """The tool called ``name``.

        Raises:
            ToolNotFound: no tool has that name (the message lists the known ones).
        """
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self.names()) or "none"
            raise ToolNotFound(
                f"unknown tool {name!r} (available tools: {known})", playbook=playbook, node=node
            )
        return tool

    def select(
        self, names: Sequence[str], *, playbook: str | None = None, node: str | None = None
    ) -> list[BaseTool]:
        """The tools called ``names``, in order (what an ``llm`` node offers its model).

        Raises:
            ToolNotFound: one of the names is unknown.
        """
        return [self.get(name, playbook=playbook, node=node) for name in names]

    def schema(self, name: str) -> dict[str, Any]:
        """The JSON Schema of a tool's arguments."""
        return tool_schema(self.get(name))

    def check(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        playbook: str | None = None,
        node: str | None = None,
    ) -> dict[str, Any]:
        """The normalized arguments a call of ``name`` with ``args`` would get.

        Raises:
            ToolNotFound: no tool has that name.
            ToolArgumentError: an argument is unknown, missing or of the wrong type.
        """
        tool = self.get(name, playbook=playbook, node=node)
        return prepare_arguments(name, tool_schema(tool), args, playbook=playbook, node=node)

    async def invoke(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        playbook: str | None = None,
        node: str | None = None,
        pulse_id: str | None = None,
    ) -> Any:
        """Check and normalize ``args``, then run the tool and return its result.

        The tool runs with ``config={"metadata": {"sea_playbook", "sea_node",
        "sea_pulse_id"}}`` (tools that take a ``config`` parameter can read it).
        Cancellation propagates untouched.

        Raises:
            ToolNotFound: no tool has that name.
            ToolArgumentError: an argument is unknown, missing or of the wrong type.
            ToolFailed: the tool raised (the original exception is the ``__cause__``).
        """
        tool = self.get(name, playbook=playbook, node=node)
        prepared = prepare_arguments(name, tool_schema(tool), args, playbook=playbook, node=node)
        try:
            metadata = {"sea_playbook": playbook, "sea_node": node, "sea_pulse_id": pulse_id}
            return await tool.ainvoke(prepared, config={"metadata": metadata})
        except Exception as exc:  # a tool's own failure, reported with its cause
            raise ToolFailed(
                f"tool {name!r} failed: {type(exc).__name__}: {exc}", playbook=playbook, node=node
            ) from exc
