"""JSON type names of Python values, for messages that say what was given.

The one place that maps parsed JSON (and the Python values the engine passes around) to
the type names JSON Schema uses: ``null``, ``boolean``, ``integer``, ``number``, ``string``,
``object``, ``array``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import orjson

EXACT_JSON_TYPES: Mapping[type, str] = {
    str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null",
    dict: "object", list: "array", tuple: "array",
}
""":func:`json_type` of the values of exactly these types (a lookup costs less than the
checks a subclass or another mapping needs)."""


def json_type(value: Any) -> str:
    """The JSON type name of ``value`` (``object``, ``array``, ``integer``…).

    ``bool`` is ``boolean`` (never ``integer``), any mapping is an ``object``, lists and
    tuples are ``array``; a value with no JSON type gives its Python type name.
    """
    exact = EXACT_JSON_TYPES.get(type(value))
    if exact is not None:
        return exact
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


_LOG10_2 = 0.30103


def json_size(value: Any, limit: int | None = None) -> int:
    """About how many characters the compact JSON text of ``value`` has, without writing it.

    Strings count their characters (escapes are not counted), numbers their digits, every
    bracket, quote, colon and comma one. The walk is iterative and its cost grows with the
    number of values, not with the length of the strings, so a gigabyte string is measured
    at once. With ``limit``, the walk stops as soon as the count passes it (the result is
    then only known to be larger than ``limit``).
    """
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)  # the exact JSON types first: an ABC check costs far more
        if kind is str:
            total += len(item) + 2
        elif kind is dict:
            total += 2 + 2 * len(item)  # braces, the colons and commas
            stack.extend(item.values())
            for key in item:  # each key with its quotes
                total += len(key) + 2 if type(key) is str else len(str(key)) + 2
        elif kind is list:
            total += 2 + len(item)  # brackets and commas
            stack.extend(item)
        elif kind in _SCALAR_SIZES:
            total += _SCALAR_SIZES[kind](item)
        else:
            total += _other_size(item, stack)
        if limit is not None and total > limit:
            return total
    return total


def _int_size(number: int) -> int:
    """The digits of ``number`` (and its sign), from its bits: exact or one more."""
    return int(abs(number).bit_length() * _LOG10_2) + 1 + (number < 0)


_SCALAR_SIZES: dict[type, Callable[[Any], int]] = {
    int: _int_size,
    float: lambda number: len(repr(number)),
    bool: lambda flag: 4 if flag else 5,
    type(None): lambda _: 4,
}
"""The size of a value of exactly one of these types (no subclass)."""


def _other_size(item: Any, stack: list[Any]) -> int:
    """:func:`json_size` of a value that is not exactly a str, dict or list (its members
    pushed on ``stack``)."""
    if isinstance(item, str):
        return len(item) + 2
    if item is None or isinstance(item, bool):
        return 4 if item is not False else 5
    if isinstance(item, int):
        return _int_size(item)
    if isinstance(item, float):
        return len(repr(item))
    if isinstance(item, Mapping):
        stack.extend(str(key) for key in item)
        stack.extend(item.values())
        return 2 + 2 * len(item)
    if isinstance(item, list | tuple):
        stack.extend(item)
        return 2 + len(item)
    return len(json_type(item)) + 2  # not JSON data: counted as a short name


def nul_pointer(value: Any) -> str | None:
    """The JSON pointer (RFC 6901) of the first string or object key in ``value`` that holds
    a NUL character, or ``None`` when none does (``""`` is ``value`` itself).

    NUL is valid JSON (``\\u0000``) but PostgreSQL's text and ``jsonb`` cannot hold it, and
    the message store refuses it on every backend: text from outside (a submitted pulse, a
    tool's result) is checked with this where it enters. The walk is iterative (any depth).
    """
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, pointer = stack.pop()
        if isinstance(item, str):
            if "\0" in item:
                return pointer
        elif isinstance(item, Mapping):
            members = [(member, f"{pointer}/{_pointer_token(str(key))}")
                       for key, member in item.items()]
            for key, (_, step) in zip(item, members, strict=True):
                if "\0" in str(key):
                    return step
            stack.extend(reversed(members))
        elif isinstance(item, list | tuple):
            stack.extend((member, f"{pointer}/{index}")
                         for index, member in reversed(list(enumerate(item))))
    return None


def _pointer_token(key: str) -> str:
    """``key`` as one JSON pointer token (``~`` and ``/`` escaped), NUL shown as ``\\u0000``."""
    return key.replace("~", "~0").replace("/", "~1").replace("\0", "\\u0000")
