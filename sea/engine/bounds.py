"""The pulse's bounds: a step budget per pulse and a visit bound per node."""

from __future__ import annotations

from collections.abc import Mapping

from sea.engine.limits import Limits
from sea.engine.state import PlaybookState
from sea.errors import BoundExceeded


def describe_loop(visits: Mapping[str, int]) -> str:
    """The nodes that ran more than once, most often first: ``a×12, b×12, c×11``."""
    repeated = sorted(
        ((count, node) for node, count in visits.items() if count > 1), key=lambda p: (-p[0], p[1])
    )
    if not repeated:
        return "no node ran twice"
    return ", ".join(f"{node}×{count}" for count, node in repeated)


def check_bounds(
    state: PlaybookState, node: str, playbook: str, limits: Limits, *, looping: bool = True
) -> None:
    """Raise :class:`BoundExceeded` if running ``node`` once more would pass a bound.

    Only nodes on a cycle (``looping``) can run twice in one run, so only they are counted.
    """
    visits = state.get("visits") or {}
    steps = state.get("steps") or 0
    if steps >= limits.max_steps:
        raise BoundExceeded(
            f"the pulse used its step budget of {limits.max_steps} node runs; "
            f"loop: {describe_loop(visits)} (raise Limits.max_steps or bound the loop)",
            playbook=playbook,
            node=node,
        )
    if looping and visits.get(node, 0) >= limits.max_visits:
        raise BoundExceeded(
            f"node {node!r} would run more than {limits.max_visits} times "
            f"(Limits.max_visits); loop: {describe_loop(visits)}",
            playbook=playbook,
            node=node,
        )
