"""``pass``: does nothing; a branching point."""

from __future__ import annotations

from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import NEVER, Waits
from sea.lang.node_models import PassNode


class PassKind(NodeKind[PassNode]):
    """Runs ``pass`` nodes."""

    model = PassNode
    pure = True
    """It reads and writes only the run's state (a graph runs it in the step of the pure
    node before it, :mod:`sea.engine.compiler`)."""

    def waits(self, node: PassNode) -> Waits:
        """Never asks a person."""
        return NEVER

    async def run(self, node: PassNode, state: PlaybookState, frame: Frame) -> Update:
        """Return no change."""
        return {}


KIND = PassKind()
