"""``say``: send text to the host without storing it."""

from __future__ import annotations

from sea.engine.events import Spoken
from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import NEVER, Waits
from sea.lang.node_models import SayNode
from sea.nodes._utterance import node_metadata, node_text


class SayKind(NodeKind[SayNode]):
    """Runs ``say`` nodes."""

    model = SayNode

    def waits(self, node: SayNode) -> Waits:
        """Never asks a person."""
        return NEVER

    async def run(self, node: SayNode, state: PlaybookState, frame: Frame) -> Update:
        """Emit the text (with the metadata object, if any); memory is not touched."""
        text = node_text(node.action, state)
        metadata = node_metadata(frame, node.id, node.metadata_key, state)
        frame.emit(
            Spoken(frame.pulse.pulse_id, frame.name, node.id, text, stored=False, metadata=metadata)
        )
        return {"outputs": [text], "spoken": [text]}


KIND = SayKind()
