"""``speak``: the persona says something: stored as conversation and sent to the host."""

from __future__ import annotations

from saimemory.records import CONVERSATION_TAG
from sea.engine.events import Spoken
from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import NEVER, Waits
from sea.lang.node_models import SpeakNode
from sea.nodes._utterance import node_metadata, node_text


class SpeakKind(NodeKind[SpeakNode]):
    """Runs ``speak`` nodes."""

    model = SpeakNode

    def waits(self, node: SpeakNode) -> Waits:
        """Never asks a person."""
        return NEVER

    async def run(self, node: SpeakNode, state: PlaybookState, frame: Frame) -> Update:
        """Store the text (role assistant, tag ``conversation``, the metadata object if
        any), then emit it with the same metadata."""
        text = node_text(node.action, state)
        metadata = node_metadata(frame, node.id, node.metadata_key, state)
        await frame.remember(node.id, "assistant", text, (CONVERSATION_TAG,), metadata)
        frame.emit(
            Spoken(frame.pulse.pulse_id, frame.name, node.id, text, stored=True, metadata=metadata)
        )
        return {"outputs": [text], "spoken": [text]}


KIND = SpeakKind()
