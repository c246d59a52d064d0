"""JSON type names of Python values, for messages that say what was given.

The one place that maps parsed JSON (and the Python values the engine passes around) to
the type names JSON Schema uses: ``null``, ``boolean``, ``integer``, ``number``, ``string``,
``object``, ``array``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson


def json_type(value: Any) -> str:
    """The JSON type name of ``value`` (``object``, ``array``, ``integer``…).

    ``bool`` is ``boolean`` (never ``integer``), any mapping is an ``object``, lists and
    tuples are ``array``; a value with no JSON type gives its Python type name.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def json_text(value: Any) -> str:
    """``value`` as compact JSON text (non-string keys as strings, other values by ``str``).

    orjson cannot write an integer beyond 64 bits; such a value is written by the standard
    library instead, so a big number in a tool result or a model's answer still renders.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS, default=str).decode()
    except TypeError:  # orjson.JSONEncodeError: an integer beyond 64 bits
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
