"""``pass``: does nothing; a branching point."""

from __future__ import annotations

from sea.engine.pulse import Frame
from sea.engine.state import PlaybookState, Update
from sea.lang.node_models import PassNode


class PassKind:
    """Runs ``pass`` nodes."""

    model = PassNode

    async def run(self, node: PassNode, state: PlaybookState, frame: Frame) -> Update:
        """Return no change."""
        return {}


KIND = PassKind()
