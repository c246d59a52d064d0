"""``set``: assign variables in order; ``=`` values are expressions, strings templates.

As in SAIVerse, assigning ``executed_playbooks_init`` a true value also creates
``executed_playbooks`` as ``[]`` when it does not exist yet (:mod:`sea.lang.saiverse`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update, assign, variables
from sea.engine.waits import NEVER, Waits
from sea.lang import saiverse
from sea.lang.expressions import Expression, compile_expression
from sea.lang.node_models import SetNode
from sea.lang.templates import render


@lru_cache(maxsize=4096)
def _expression(source: str) -> Expression:
    return compile_expression(source)


def evaluate(value: Any, scope: Mapping[str, Any]) -> Any:
    """The value one assignment stores."""
    if not isinstance(value, str):
        return value
    if value.startswith("="):
        return _expression(value[1:]).evaluate(scope)
    return render(value, scope)


class SetKind(NodeKind[SetNode]):
    """Runs ``set`` nodes."""

    model = SetNode
    pure = True
    """It reads and writes only the run's state (a graph runs it in the step of the pure
    node before it, :mod:`sea.engine.compiler`)."""

    def waits(self, node: SetNode) -> Waits:
        """Never asks a person."""
        return NEVER

    async def run(self, node: SetNode, state: PlaybookState, frame: Frame) -> Update:
        """Evaluate every assignment in order; later ones see earlier ones."""
        done: dict[str, Any] = {}
        scope: Mapping[str, Any] = variables(state).new_child(done)
        for key, value in node.assignments.items():
            done[key] = evaluate(value, scope)
        done.update(saiverse.set_node_values(scope))
        return assign(done)


KIND = SetKind()
