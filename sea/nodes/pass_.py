"""``pass``: does nothing; a branching point."""

from __future__ import annotations

from sea.engine.pulse import Frame
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import NEVER, Waits
from sea.lang.node_models import PassNode


class PassKind:
    """Runs ``pass`` nodes."""

    model = PassNode

    def waits(self, node: PassNode) -> Waits:
        """Never asks a person."""
        return NEVER

    async def run(self, node: PassNode, state: PlaybookState, frame: Frame) -> Update:
        """Return no change."""
        return {}


KIND = PassKind()
