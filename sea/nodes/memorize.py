"""``memorize``: write one message to the persona's memory (structures as JSON)."""

from __future__ import annotations

from sea.engine.events import WarningRaised
from sea.engine.pulse import Frame, line_of
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import NEVER, Waits
from sea.lang.node_models import MemorizeNode
from sea.nodes._utterance import node_metadata, node_text


class MemorizeKind(NodeKind[MemorizeNode]):
    """Runs ``memorize`` nodes."""

    model = MemorizeNode
    keyed_writes = True
    """It only writes its message (keyed by the node run in a recoverable pulse)."""

    def waits(self, node: MemorizeNode) -> Waits:
        """Never asks a person."""
        return NEVER

    async def run(self, node: MemorizeNode, state: PlaybookState, frame: Frame) -> Update:
        """Store the rendered text with the node's role and tags; ``last`` becomes the text."""
        text = node_text(node.action, state)
        if not text.strip():
            frame.emit(
                WarningRaised(
                    frame.pulse.pulse_id,
                    "empty_memorize",
                    "nothing to memorize: the text is empty",
                    frame.name,
                    node.id,
                )
            )
            return {"last": text}
        metadata = node_metadata(frame, node.id, node.metadata_key, state)
        await frame.remember(node.id, node.role, text, node.tags or (), metadata,
                             line_of(node.line_role, node.scope))
        return {"last": text, "outputs": [text]}


KIND = MemorizeKind()
