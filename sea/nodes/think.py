"""``think``: store an internal thought (tag ``internal``), not shown to the host."""

from __future__ import annotations

from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import NEVER, Waits
from sea.lang.node_models import ThinkNode
from sea.nodes._utterance import node_text

INTERNAL_TAG = "internal"


class ThinkKind(NodeKind[ThinkNode]):
    """Runs ``think`` nodes."""

    model = ThinkNode

    def waits(self, node: ThinkNode) -> Waits:
        """Never asks a person."""
        return NEVER

    async def run(self, node: ThinkNode, state: PlaybookState, frame: Frame) -> Update:
        """Store the text as an assistant message tagged ``internal``."""
        text = node_text(node.action, state)
        await frame.remember(node.id, "assistant", text, (INTERNAL_TAG,))
        return {"outputs": [text]}


KIND = ThinkKind()
