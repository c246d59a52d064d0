"""``tool``: call a named tool with templated ``args`` (or legacy ``args_input`` paths)."""

from __future__ import annotations

from typing import Any

from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update, assign, variables
from sea.engine.waits import Waits
from sea.lang.node_models import ToolNode
from sea.lang.templates import MISSING, render_value, resolve_path
from sea.nodes._tools import run_tool


def tool_args(node: ToolNode, state: PlaybookState) -> dict[str, Any]:
    """The call's arguments: ``args`` rendered, then ``args_input`` state paths.

    A legacy path that names nothing leaves its argument out (the tool's default applies),
    never an empty string in its place.
    """
    scope = variables(state)
    args: dict[str, Any] = {}
    if node.args:
        args.update(render_value(node.args, scope))
    for key, source in (node.args_input or {}).items():
        if not isinstance(source, str):
            args[key] = source
            continue
        value = resolve_path(scope, source)
        if value is not MISSING:
            args[key] = value
    return args


def result_update(
    result: Any, output_key: str | None, output_keys: list[str] | None = None
) -> Update:
    """``last`` and the output variables for a tool's result (tuples spread over keys)."""
    values: dict[str, Any] = {}
    if output_keys and isinstance(result, tuple | list):
        for key, item in zip(output_keys, result, strict=False):
            values[key] = item
        last = result[0] if result else None
    else:
        last = result
        if output_key:
            values[output_key] = result
    values["last"] = last
    return assign(values)


class ToolKind(NodeKind[ToolNode]):
    """Runs ``tool`` nodes."""

    model = ToolNode
    one_call = "tool"

    def waits(self, node: ToolNode) -> Waits:
        """Asks when the policy asks about its tool or gates it."""
        return Waits(tools=frozenset((node.action,)))

    def only_tool(self, node: ToolNode) -> str | None:
        """Its tool: the node calls it and sets variables."""
        return node.action

    async def run(self, node: ToolNode, state: PlaybookState, frame: Frame) -> Update:
        """Call the tool; ``last`` is its result (unknown tools and errors fail the node)."""
        result = await run_tool(frame, node.id, node.action, tool_args(node, state))
        return result_update(result, node.output_key, node.output_keys)


KIND = ToolKind()
