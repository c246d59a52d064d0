"""The typed state of a running playbook, with one reducer per channel.

Nodes never mutate the state they are given: they return a partial update, and each
channel's reducer folds it in. Channels:

* ``vars``: the playbook's variables (declared inputs, builtins, node outputs), merged key
  by key (an update names only the keys it changes).
* ``last``: the previous node's result. ``error``: the last failure, ``{code, message, node}``.
* ``fault``: the id of a node that just failed and routes to its ``error_next``.
* ``outputs`` and ``spoken``: texts appended in order.
* ``steps`` and ``visits``: counters for the pulse's bounds (added up).
* ``spent``: what the pulse's model calls used (calls, tokens in and out, cost), added up
  like ``steps`` so the budgets of ``Limits.budget`` hold across a wait and a resume.
* ``origin``: what started the pulse (playbook, persona, input); read when a waiting pulse
  is resumed by another process.
"""

from __future__ import annotations

import operator
from collections import ChainMap
from collections.abc import Mapping
from typing import Annotated, Any, TypedDict

from sea.lang.variables import run_defaults
from sea.llm.budget import add_spent

LAST = "last"
ERROR = "error"


def merge_vars(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer of ``vars``: the keys of ``right`` replace those of ``left``; others stay."""
    if not right:
        return left or {}
    if not left:
        return dict(right)
    return {**left, **right}


def add_counts(left: dict[str, int] | None, right: dict[str, int] | None) -> dict[str, int]:
    """Reducer of ``visits``: counts are added per node id."""
    if not right:
        return left or {}
    merged = dict(left or {})
    for key, count in right.items():
        merged[key] = merged.get(key, 0) + count
    return merged


def keep_last(left: Any, right: Any) -> Any:
    """Reducer of the plain channels: the newest write wins."""
    return right


class PlaybookState(TypedDict, total=False):
    """The state of one playbook run (one LangGraph thread or sub-run)."""

    vars: Annotated[dict[str, Any], merge_vars]
    last: Annotated[Any, keep_last]
    error: Annotated[dict[str, Any] | None, keep_last]
    fault: Annotated[str | None, keep_last]
    outputs: Annotated[list[str], operator.add]
    spoken: Annotated[list[str], operator.add]
    steps: Annotated[int, operator.add]
    visits: Annotated[dict[str, int], add_counts]
    spent: Annotated[dict[str, float], add_spent]
    origin: Annotated[dict[str, Any], keep_last]


Update = dict[str, Any]
"""A partial :class:`PlaybookState` returned by a node."""


def variables(state: Mapping[str, Any]) -> ChainMap[str, Any]:
    """The variables templates, expressions and conditions read: ``vars`` plus last/error,
    and SAIVerse's run variables the run was not given (``metadata`` → ``{}``,
    :func:`sea.lang.variables.run_defaults`). The last map is ``vars`` itself.

    Args:
        state: A playbook run's state (:class:`PlaybookState`).

    Returns:
        Name → value of every variable a template may read.
    """
    given = state.get("vars") or {}
    top = {k: v for k, v in run_defaults().items() if k not in given}
    top.update({LAST: state.get(LAST), ERROR: state.get(ERROR)})
    return ChainMap(top, given)


def assign(values: Mapping[str, Any]) -> Update:
    """The update that sets these variables (``last``/``error`` go to their own channels).

    Args:
        values: Variable name → value.

    Returns:
        The partial state a node returns to set them.
    """
    update: Update = {}
    plain = {k: v for k, v in values.items() if k not in (LAST, ERROR)}
    if plain:
        update["vars"] = plain
    if LAST in values:
        update[LAST] = values[LAST]
    if ERROR in values:
        update[ERROR] = values[ERROR]
    return update
