"""The tools an ``actions`` node offers its model: names, descriptions, argument schemas."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sea.engine.tools.box import ToolBox


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as the model sees it."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    """The JSON Schema of its arguments (an object schema)."""

    def to_json(self) -> dict[str, Any]:
        """``{description, parameters}`` (the trace keeps the catalogue in this form)."""
        return {"description": self.description, "parameters": dict(self.parameters)}


def catalogue_of(
    toolbox: ToolBox, names: Sequence[str], *, playbook: str | None, node: str | None
) -> list[ToolSpec]:
    """The offered tools, in the node's order.

    Raises:
        ToolNotFound: a name is not one of the runtime's tools.
    """
    tools = toolbox.select(names, playbook=playbook, node=node)
    return [
        ToolSpec(tool.name, (tool.description or "").strip(), toolbox.schema(tool.name))
        for tool in tools
    ]
