"""``conditional_next``: choose the next node by comparing a state value with case keys.

Comparison is JSON-typed, with string values compared as text:

* A case key denotes a JSON value: ``"true"``/``"false"`` booleans, ``"5"``/``"2.5"``
  numbers, ``"null"`` null, anything else (``"basic_chat"``, ``"True"``) a string.
* ``eq``: a boolean matches only a boolean key (``"true"``), a number only a numeric key
  (``5`` and ``5.0`` match ``"5"``), a string matches the key's text exactly (so
  ``"true"`` also matches the string ``"true"`` of a string-enum flag), a missing or null
  value matches ``"null"`` and ``""``; objects and lists match a key holding the same JSON.
* ``ne``: the first case whose key does not match as ``eq`` would.
* ``gt``/``gte``/``lt``/``lte``: numeric (a numeric string counts as its number); a value
  that is not a number matches no case, and non-numeric keys are skipped.
* ``contains``: a string value contains the key's text; a list value has an element that
  matches the key as ``eq`` would; an object value has the key as a member. Any other value
  (a number, a boolean, null, a missing one) contains nothing. SAIVerse's docs named the
  operator but its runtime compared it as ``eq`` (an unknown operator there): SEA does what
  the name says.
* Keys may contain ``{var}`` references; they are rendered against the state first (a key
  that is exactly one reference compares with the referenced value).
* The first matching case wins; then the ``default`` field; then a ``"default"`` case key;
  otherwise ``None`` (the playbook ends).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from sea.lang.node import ConditionalNext
from sea.lang.templates import MISSING, render, resolve_path

DEFAULT_KEY = "default"

_Number = int | float


def case_key_value(key: str) -> Any:
    """The JSON value a case key denotes: ``"true"`` → True, ``"5"`` → 5, ``"x"`` → "x"."""
    if key != key.strip() or not key:
        return key
    try:
        value = orjson.loads(key)
    except orjson.JSONDecodeError:
        return key
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return key


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_number(value: Any) -> _Number | None:
    if _is_number(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, str):
        denoted = case_key_value(value)
        if _is_number(denoted):
            return denoted  # type: ignore[no-any-return]
    return None


def _key_json(key: str) -> Any:
    try:
        return orjson.loads(key)
    except orjson.JSONDecodeError:
        return MISSING


def _matches_text_key(value: Any, key: str) -> bool:
    if isinstance(value, str):
        return value == key
    if value is None or value is MISSING:
        return key in ("null", "")
    denoted = case_key_value(key)
    if isinstance(value, bool):
        return isinstance(denoted, bool) and denoted is value
    if _is_number(value):
        return _is_number(denoted) and denoted == value
    return bool(_key_json(key) == value)


def _matches_typed_key(value: Any, key: Any) -> bool:
    """Equality with a key that rendered to a typed value (a whole ``{ref}`` key)."""
    if isinstance(key, str):
        return _matches_text_key(value, key)
    if value is MISSING:
        value = None
    if isinstance(value, bool) or isinstance(key, bool):
        return isinstance(value, bool) and isinstance(key, bool) and value is key
    return bool(value == key)


def _ordering(operator: str) -> Callable[[_Number, _Number], bool]:
    return {
        "gt": lambda a, b: a > b,
        "gte": lambda a, b: a >= b,
        "lt": lambda a, b: a < b,
        "lte": lambda a, b: a <= b,
    }[operator]


def _key_value(key: str, state: Mapping[str, Any]) -> Any:
    if "{" not in key:
        return key
    return render(key, state, missing="keep")


def _contains(value: Any, key: Any) -> bool:
    if isinstance(value, str):
        return str(key) in value if isinstance(key, str) else orjson.dumps(key).decode() in value
    if isinstance(value, list):
        return any(_matches_typed_key(item, key) for item in value)
    if isinstance(value, dict):
        return isinstance(key, str) and key in value
    return False


def _case_matches(operator: str, value: Any, key: Any) -> bool:
    if operator == "contains":
        return _contains(value, key)
    if operator == "eq":
        return _matches_typed_key(value, key)
    if operator == "ne":
        return not _matches_typed_key(value, key)
    left = _as_number(value)
    right = _as_number(key)
    if left is None or right is None:
        return False
    return _ordering(operator)(left, right)


def choose_target(cond: ConditionalNext, state: Mapping[str, Any]) -> str | None:
    """The target node id for this state (``None``: end the playbook).

    Args:
        cond: The node's ``conditional_next``.
        state: The variables.
    """
    value = resolve_path(state, cond.field)
    for key, target in cond.cases.items():
        if key == DEFAULT_KEY:
            continue
        if _case_matches(cond.operator, value, _key_value(key, state)):
            return target
    if cond.default is not None:
        return cond.default
    return cond.cases.get(DEFAULT_KEY)
