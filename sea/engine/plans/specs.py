"""Action specs as callers give them, spec ids and step ids, and selections of specs.

Spec ids are positions: ``"1"``, ``"2"``, ... in the order ``set_action_specs`` received the
specs (set again, they are numbered again). A spec's *step id*, unique across plans, is
``<plan_id>:<spec id>``; so a new plan's ``first_step_id`` is ``<plan_id>:1``, known when the
plan is proposed and the first spec's step id once specs are set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from saimemory.plans import ACTION_KINDS, ActionKind, ActionSpec, ActionSpecExt, SpecSelection
from sea.errors import PlanApprovalError

SpecInput = ActionSpec | Mapping[str, Any]
"""A spec as a caller gives it: the record, or its JSON object (from a tool call)."""

SelectionInput = SpecSelection | Mapping[str, Any]
"""A selection as a caller gives it: the record, ``{"all": true}`` or ``{"ids": [...]}``."""

_FIELDS = ("kind", "path", "content", "description", "optional")


def step_id(plan_id: str, spec_id: str) -> str:
    """The step id of a plan's spec: ``<plan_id>:<spec_id>``."""
    return f"{plan_id}:{spec_id}"


def first_step_id(plan_id: str) -> str:
    """The step id of a plan's first spec (``<plan_id>:1``)."""
    return step_id(plan_id, "1")


def spec_id(position: int) -> str:
    """The id of the spec at 0-based ``position``."""
    return str(position + 1)


def coerce_spec(item: object) -> tuple[ActionSpec | None, str]:
    """The spec ``item`` describes, or ``None`` and what is wrong with it."""
    if isinstance(item, ActionSpec):
        item = {name: getattr(item, name) for name in _FIELDS}
    if not isinstance(item, Mapping):
        return None, f"a spec must be an object with {', '.join(_FIELDS)}, got {item!r:.60}"
    unknown = sorted(str(key) for key in item if key not in _FIELDS)
    if unknown:
        return None, f"unknown field(s) {', '.join(unknown)}; a spec has {', '.join(_FIELDS)}"
    kind = item.get("kind")
    if kind not in ACTION_KINDS:
        return None, f"kind must be one of {', '.join(ACTION_KINDS)}, got {kind!r}"
    path, content = item.get("path", ""), item.get("content")
    description, optional = item.get("description", ""), item.get("optional", False)
    if path is None:
        path = ""
    for name, value, ok in (("path", path, isinstance(path, str)),
                            ("content", content, content is None or isinstance(content, str)),
                            ("description", description, isinstance(description, str)),
                            ("optional", optional, isinstance(optional, bool))):
        if not ok:
            return None, f"{name} has the wrong type ({type(value).__name__})"
    return ActionSpec(cast(ActionKind, kind), path, content, description, optional), ""


def coerce_selection(value: object) -> SpecSelection:
    """The selection ``value`` describes.

    Raises:
        PlanApprovalError: it is neither a selection nor ``{"all": bool, "ids": [str]}``.
    """
    if isinstance(value, SpecSelection):
        return value
    if isinstance(value, Mapping) and set(value) <= {"all", "ids"}:
        every, ids = value.get("all", False), value.get("ids", ())
        if isinstance(every, bool) and isinstance(ids, Sequence) and not isinstance(ids, str) \
                and all(isinstance(item, str) for item in ids):
            return SpecSelection(all=every, ids=tuple(ids))
    raise PlanApprovalError(
        f'a selection is {{"all": true}} or {{"ids": ["1", "3"]}}, got {value!r:.80}')


def selected(selection: SpecSelection, specs: Sequence[ActionSpecExt]) -> tuple[str, ...]:
    """The ids ``selection`` names, in plan order.

    Raises:
        PlanApprovalError: it names no spec, or ids the plan does not have.
    """
    known = [spec.id for spec in specs]
    if selection.all:
        chosen = known
    else:
        unknown = [item for item in selection.ids if item not in known]
        if unknown:
            raise PlanApprovalError(
                f"the selection names spec id(s) {', '.join(unknown)} the plan does not have "
                f"(its specs: {', '.join(known) or 'none'})")
        chosen = [item for item in known if item in selection.ids]
    if not chosen:
        raise PlanApprovalError("the selection names no spec; select all or some spec ids")
    return tuple(chosen)
