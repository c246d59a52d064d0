"""``subplay``: call a named playbook like a function (see :mod:`sea.engine.calls`), inline
or as a subagent in a thread of its own (see :mod:`sea.engine.subagent`)."""

from __future__ import annotations

from sea.engine.calls import call_playbook
from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update, variables
from sea.engine.subagent import run_call
from sea.engine.waits import Waits
from sea.lang.node_models import SubplayNode
from sea.lang.templates import render_value


class SubplayKind(NodeKind[SubplayNode]):
    """Runs ``subplay`` nodes."""

    model = SubplayNode

    def waits(self, node: SubplayNode) -> Waits:
        """Asks where its callee can."""
        return Waits(callees=(node.playbook,))

    async def run(self, node: SubplayNode, state: PlaybookState, frame: Frame) -> Update:
        """Render ``args``, run the callee, copy its ``output_schema`` keys back."""
        callee, _ = frame.pulse.playbook(node.playbook)
        args = render_value(node.args or {}, variables(state))
        return await run_call(
            frame, node, state, callee,
            lambda inner: call_playbook(inner, node, state, callee, args),
        )


KIND = SubplayKind()
