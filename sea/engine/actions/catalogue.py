"""The tools an ``actions`` node offers its model: names, descriptions, argument schemas."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sea.engine.tools.box import ToolBox
from sea.engine.tools.refs import ToolParameters


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as the model sees it."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    """The JSON Schema of its arguments (an object schema)."""
    fitting: ToolParameters | None = field(default=None, compare=False, repr=False)
    """``parameters`` read for refs and the type guard (the runtime keeps one per tool);
    None: read when needed."""

    def refs(self) -> ToolParameters:
        """How refs are fitted to this tool's parameters, and its type guard."""
        return self.fitting if self.fitting is not None else ToolParameters(
            self.name, self.parameters
        )

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
    specs = []
    for tool in tools:
        signature = toolbox.signature(tool.name)
        specs.append(ToolSpec(tool.name, (tool.description or "").strip(), signature.schema,
                              signature.parameters))
    return specs
