"""``tool_call``: run the tool call an ``llm`` node chose (``{name, args}`` in state)."""

from __future__ import annotations

from typing import Any

from sea.engine.pulse import Frame, as_text
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update, variables
from sea.engine.waits import Waits
from sea.errors import NodeFailed
from sea.lang.node_models import ToolCallNode
from sea.lang.templates import MISSING, resolve_path
from sea.lang.trust import neutralize
from sea.nodes._tools import run_tool
from sea.nodes.tool import result_update

TOOL_RESULT_TAG = "tool_result"


def chosen_call(node: ToolCallNode, state: PlaybookState, frame: Frame) -> tuple[str, Any]:
    """The tool name and arguments stored under ``call_source``."""
    call = resolve_path(variables(state), node.call_source)
    if call is MISSING or not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise NodeFailed(
            f"no tool call in {node.call_source!r} (the llm node's `function_call` output "
            "key); the model chose no tool",
            playbook=frame.name,
            node=node.id,
        )
    args = call.get("args") or {}
    if not isinstance(args, dict):
        raise NodeFailed(
            f"the arguments of the tool call in {node.call_source!r} are not an object",
            playbook=frame.name,
            node=node.id,
        )
    return call["name"], args


class ToolCallKind(NodeKind[ToolCallNode]):
    """Runs ``tool_call`` nodes."""

    model = ToolCallNode

    def waits(self, node: ToolCallNode) -> Waits:
        """Asks when the policy asks about the chosen tool, which is known only when it runs."""
        return Waits(any_tool=True)

    async def run(self, node: ToolCallNode, state: PlaybookState, frame: Frame) -> Update:
        """Run the chosen call; ``last`` is its result.

        The call and its result are also written to memory for this pulse (role user,
        ``<system>``, tag ``tool_result``, never ``conversation``), so the model that chose
        the call sees the result on its next turn, as the pulse rule shows every message of
        the pulse.
        """
        name, args = chosen_call(node, state, frame)
        result = await run_tool(frame, node.id, name, args)
        shown = f"[tool {neutralize(name)}({neutralize(as_text(args))})]\n"
        note = f"<system>\n{shown}{neutralize(as_text(result))}\n</system>"
        await frame.remember(node.id, "user", note, (TOOL_RESULT_TAG,))
        return result_update(result, node.output_key)


KIND = ToolCallKind()
