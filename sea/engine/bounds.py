"""The pulse's bounds: a step budget per pulse, a visit bound per node, and the sizes of
what a node stores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sea.engine.limits import Limits
from sea.engine.state import LAST, PlaybookState, Update
from sea.errors import BoundExceeded, SizeLimitExceeded
from sea.jsontypes import json_size


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


_TEXT_CHANNELS = ("outputs", "spoken")


def check_sizes(
    state: PlaybookState, update: Update, limits: Limits, *, playbook: str, node: str
) -> None:
    """Raise :class:`SizeLimitExceeded` if ``update`` stores a value larger than
    ``Limits.max_value_chars`` or would grow the state past ``Limits.max_state_chars``.

    Sizes are measured, not written out (:func:`sea.jsontypes.json_size`), and a measure
    stops once it passes its limit, so an oversized value costs nothing to refuse. An update
    that stores nothing (a ``pass`` node's) is not measured.
    """
    stored: dict[str, Any] = dict(update.get("vars") or {})
    if LAST in update:
        stored[LAST] = update[LAST]
    sizes: dict[str, int] = {}
    for name, value in stored.items():
        size = json_size(value, limits.max_value_chars)
        if size > limits.max_value_chars:
            raise SizeLimitExceeded(
                f"node {node!r} would store more than {limits.max_value_chars:,} characters "
                f"in `{name}` (Limits.max_value_chars)",
                limit="max_value_chars",
                playbook=playbook,
                node=node,
            )
        sizes[name] = size
    added = [update.get(channel) for channel in _TEXT_CHANNELS if update.get(channel)]
    if not sizes and not added:
        return
    budget = limits.max_state_chars
    old_vars = state.get("vars") or {}
    kept = {k: v for k, v in old_vars.items() if k not in stored}
    rest = [kept, *added, *(state.get(channel) for channel in _TEXT_CHANNELS)]
    if LAST not in stored:
        rest.append(state.get(LAST))
    total = sum(sizes.values())
    total += json_size(rest, max(budget - total, 0))
    if total > budget:
        every = {**{k: json_size(v, budget) for k, v in kept.items()}, **sizes}
        largest = sorted(every.items(), key=lambda item: -item[1])[:3]
        shown = ", ".join(f"`{name}` ({size:,})" for name, size in largest)
        raise SizeLimitExceeded(
            f"node {node!r} would grow the state of playbook {playbook!r} past "
            f"{budget:,} characters (Limits.max_state_chars); largest values: {shown}",
            limit="max_state_chars",
            playbook=playbook,
            node=node,
        )
