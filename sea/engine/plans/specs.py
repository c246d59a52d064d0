"""Action specs as callers give them, spec ids and step ids, and selections of specs.

Spec ids are positions: ``"1"``, ``"2"``, ... in the order ``set_action_specs`` received the
specs (set again, they are numbered again). A spec's *step id*, unique across plans, is
``<plan_id>:<spec id>``; a plan's ``first_step_id`` is its first spec's step id, None while it
has no spec (a new plan: "no step yet").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from saimemory.plans import ACTION_KINDS, ActionKind, ActionSpec, ActionSpecExt, SpecSelection
from sea.errors import PlanApprovalError

SpecInput = ActionSpec | Mapping[str, Any]
"""A spec as a caller gives it: the record, or its JSON object (from a tool call)."""

SelectionInput = SpecSelection | Mapping[str, Any]
"""A selection as a caller gives it: the record, ``{"all": true}`` or ``{"ids": [...]}``."""

_FIELDS = ("kind", "path", "content", "description", "optional")
_NOT_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""Control characters (C0, DEL, C1: newline, carriage return, escape...) and the Unicode line
and paragraph separators: what would start a new line, or steer a terminal, where a person
reads a spec's path or description on one line."""


def step_id(plan_id: str, spec_id: str) -> str:
    """The step id of a plan's spec: ``<plan_id>:<spec_id>``."""
    return f"{plan_id}:{spec_id}"


def first_step_id(plan_id: str, specs: Sequence[ActionSpecExt]) -> str | None:
    """The step id of a plan's first spec, or None when it has none yet ("no step yet")."""
    return step_id(plan_id, specs[0].id) if specs else None


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
    for name, value in (("path", path), ("content", content), ("description", description)):
        problem = text_problem(name, value)  # not text: nothing of it can be stored
        if problem:
            return None, problem
    return ActionSpec(cast(ActionKind, kind), path, content, description, optional), ""


def text_problem(name: str, value: str | None, *, one_line: bool = False) -> str:
    """What keeps ``value`` from being the text of field ``name`` (``""``: nothing): a lone
    surrogate (not text: it has no UTF-8 form), or, for a ``one_line`` field, a control
    character or line break."""
    if value is None:
        return ""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"{name} holds a lone surrogate (U+{ord(value[exc.start]):04X}) at character "
                f"{exc.start}, which is not text; give it as UTF-8 text")
    found = _NOT_ONE_LINE.search(value) if one_line else None
    if found is not None:
        char = found.group()
        what = _CALLED.get(char, "a control character or line break")
        return (f"{name} holds {what} (U+{ord(char):04X}) at character {found.start()}; a "
                f"{name} is one line of text (put longer explanations in the plan's content)")
    return ""


_CALLED = {"\0": "a NUL character", "\n": "a line feed", "\r": "a carriage return",
           "\x1b": "an escape character (ESC)"}


def one_line(text: str) -> str:
    """``text`` with its control characters and line breaks escaped (``\\n``...), for
    messages that name a path."""
    return _NOT_ONE_LINE.sub(lambda found: repr(found.group())[1:-1], text)


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
