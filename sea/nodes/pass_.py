"""``pass``: does nothing; a branching point."""

from __future__ import annotations

from sea.models import PassNode
from sea.pulse import Frame
from sea.state import PlaybookState, Update


class PassKind:
    """Runs ``pass`` nodes."""

    type = "pass"

    async def run(self, node: PassNode, state: PlaybookState, frame: Frame) -> Update:
        """Return no change."""
        return {}


KIND = PassKind()
