"""JSON type names of Python values, for messages that say what was given.

The one place that maps parsed JSON (and the Python values the engine passes around) to
the type names JSON Schema uses: ``null``, ``boolean``, ``integer``, ``number``, ``string``,
``object``, ``array``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
