"""The ``ref:`` rules: what an earlier action's result becomes for a parameter of each kind.

In an action pipeline a model plans several tool calls in one answer,
``[{"action_id": "read_doc", "tool": "read_file", "parameters": {...}}, ...]``. A later
action's parameter may be exactly the string ``"ref:<action_id>"``: it receives that earlier
action's raw result, normalized to the type the parameter's JSON Schema expects. This module is
the one place that holds those rules (pure functions, no I/O); every conversion made is
returned as a :class:`Normalization` record, so a trace can show what each ref became. Their
application to a tool's parameters (each parameter's schema read once, the refs of an
action's arguments resolved) is :mod:`sea.engine.tools.refs`.

Refs
    A ref is a top-level parameter value that is a string ``ref:<id>``: the prefix exactly
    (lower case), then an action id without whitespace (spaces around it are ignored).
    ``"ref: read_doc"`` is a ref to ``read_doc``; ``"ref: see the notes"`` is ordinary text.
    ``"ref:"`` with no id, a ref to an action with no result (``unresolved``), a ref for a
    parameter the tool does not have (``unknown_parameter``; reported here rather than left
    to :func:`~sea.engine.tools.arguments.prepare_arguments`, so every ref problem is a
    :class:`RefProblem`) and a ref nested inside a list or an object (``nested``: not
    supported) raise :class:`RefProblem`; a ``ref:`` string never reaches a tool. Values that
    are not refs pass through unchanged (``prepare_arguments`` checks them as for any call).

Kinds of parameter (the schema read through ``$ref`` into ``$defs`` and through
``anyOf``/``oneOf``, so pydantic's ``Optional[str]``, ``anyOf: [{type: string}, {type:
null}]``, is a string parameter)
    * **id**: the schema (or the ``$defs`` entry it refers to) has ``x-sea-ref``
      (:data:`REF_KEYWORD`), the result keys that feed it, e.g.
      ``"x-sea-ref": ["step_id", "first_step_id"]``;
    * **array**: accepts array, neither object nor string;
    * **string**: accepts string, neither object nor array;
    * **other**: everything else (numbers, booleans, objects, unions, no type at all).

Rules (the ``rule`` of the :class:`Normalization` record; every resolved ref gets exactly one)
    =========================  =================================================================
    rule (parameter kind)      result → argument
    =========================  =================================================================
    ``as_is`` (any)            a value of a non-null type the parameter accepts (for *other*:
                               a value its whole schema accepts) → unchanged (tuple → list)
    ``array.wrap`` (array)     an object, or a value of a type the ``items`` schema declares
                               (``"a"`` for ``list[str]``) → ``[result]``
    ``array.raw`` (array)      anything else, null included → ``[{"raw": result}]``, and a
                               warning
    ``string.content``         an object whose ``content`` is a str → that ``content``
    ``string.data_content``    an object whose ``data.content`` is a str → that text
    ``string.response``        an object whose ``response`` is a str → that ``response``
    ``string.json``            anything else, null included → its JSON text (``json_text``)
    ``string.truncated``       text over the limit → cut, :data:`TRUNCATION_NOTE` appended,
                               note included in the limit
    ``id.key`` (id)            an object → the value of the first ``x-sea-ref`` key present and
                               non-empty, fitted like *other*; ``detail`` names the key
    ``integer.from_number``    a float with an integral value, for a parameter that accepts
                               integer but not number → ``int`` (``5.0`` → ``5``)
    ``number.from_string``     a string holding a JSON number, for an integer or number
                               parameter, nothing lost → the number (``"5"`` → ``5``,
                               ``"5.0"`` → ``5`` for integer, ``"2.5"`` → ``2.5``)
    ``boolean.from_string``    ``"true"``/``"false"`` (any case, spaces around), for a boolean
                               parameter → the boolean
    =========================  =================================================================

    The ``string.*`` rules are for string parameters; ``integer.from_number``,
    ``number.from_string`` and ``boolean.from_string`` for *other* ones (and for the value an
    ``id.key`` picked).

* The string limit is the parameter's ``maxLength`` or ``string_cap``, the smaller when both
  are given. A cut keeps the first characters and appends ``"\\n…[truncated: K of N
  characters]"`` (K kept, N the full length), note included in the limit; when even the note
  does not fit, the text is cut to ``limit - 1`` characters and ``…``. The record's ``detail``
  says where the text came from and both lengths, e.g. ``content; cut to 3961 of 12345
  characters (limit 4000)``.
* A string parameter always receives a str and an array parameter always a list, even for a
  null result (the text ``null``, ``[{"raw": null}]``): a ref asks for a value, and null is
  not one for them.
* An *id* parameter given a non-object result (a string, typically) is fitted like *other*.
  An object with none of the keys is a :class:`RefProblem` (``no_id_key``).
* *other*: conversions are made only when nothing is lost (``5.5`` is never an integer,
  ``"1"`` never a boolean, ``5`` never turned into ``"5"`` here: a string parameter takes it
  through ``string.json``). A value that still does not fit raises :class:`RefProblem`
  (``type_mismatch``, or ``invalid`` when the type is right but the schema refuses it), naming
  the parameter, the type found with a short preview, and the type expected.
* Other constraints of a string or array parameter (``pattern``, ``enum``, ``minItems``, item
  schemas) are left to ``prepare_arguments``, which checks every call.

:func:`~sea.engine.tools.refs.type_guard` is the light check run right before a call: the
first argument whose JSON type the schema does not accept, in the words ``prepare_arguments``
uses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from types import SimpleNamespace
from typing import Any, TypeGuard

from saimemory.frozen import fast_init
from sea.engine.tools.arguments import accepted_types, resolve_schema_ref
from sea.errors import SeaError
from sea.jsontypes import json_text, json_type

REF_PREFIX = "ref:"
"""What a parameter value starts with when it is a ref to an earlier action's result."""

REF_KEYWORD = "x-sea-ref"
"""JSON Schema extension keyword on an id parameter: the result keys that feed it, in order."""

LOOKUP_KEYWORD = "x-sea-ref-lookup"
"""JSON Schema extension keyword on an id parameter: ``{result key: tool}``. A ref whose
result has none of the ``x-sea-ref`` keys but one of these is looked up with that tool
(called with ``{key: value}``), and the ``x-sea-ref`` keys are read from the tool's result
too: a ``step_id`` ref to a result that carries only a ``plan_id`` finds the plan's
``first_step_id`` through ``plan_get_state``."""

TRUNCATION_NOTE = "\n…[truncated: {kept} of {full} characters]"
"""Appended to a string argument that was cut (``kept`` characters kept of ``full``)."""

_JSON_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)", re.ASCII)
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", re.ASCII)
_MAX_DIGITS = 4000
"""Digits beyond which a numeric string is not turned into an integer (``"1e999999"``)."""


class Rule(StrEnum):
    """The stable names of the normalization rules (see the module's table)."""

    AS_IS = "as_is"
    ARRAY_WRAP = "array.wrap"
    ARRAY_RAW = "array.raw"
    STRING_CONTENT = "string.content"
    STRING_DATA_CONTENT = "string.data_content"
    STRING_RESPONSE = "string.response"
    STRING_JSON = "string.json"
    STRING_TRUNCATED = "string.truncated"
    ID_KEY = "id.key"
    INTEGER_FROM_NUMBER = "integer.from_number"
    NUMBER_FROM_STRING = "number.from_string"
    BOOLEAN_FROM_STRING = "boolean.from_string"


RULES = SimpleNamespace(**{rule.name: rule.value for rule in Rule})
"""The rules' names as plain strings, by member name (``RULES.AS_IS == "as_is"``): what the
functions below use, since reading an enum member and its ``value`` costs a call each."""


@fast_init  # one per resolved ref
@dataclass(frozen=True, slots=True)
class Normalization:
    """What one ref'd parameter received: the rule applied and the JSON types before and after."""

    parameter: str
    rule: str
    """The rule's stable name, the value of one of :class:`Rule` (e.g. ``"array.wrap"``)."""
    from_type: str
    """The JSON type of the action's result (:func:`sea.jsontypes.json_type`)."""
    to_type: str
    """The JSON type of the argument passed."""
    detail: str | None = None
    """For ``string.truncated`` the text's source and lengths, for ``id.key`` the key used."""


class RefProblem(SeaError, ValueError):
    """A ref cannot be resolved, or its result does not fit the parameter.

    ``reason`` is stable: ``malformed``, ``unresolved``, ``unknown_parameter``, ``nested``,
    ``no_id_key``, ``type_mismatch`` or ``invalid``; the message says it in words. Its code
    is that of a tool argument error; the engine adds the playbook and node.
    """

    code = "SEA531"

    def __init__(
        self,
        parameter: str,
        reason: str,
        detail: str,
        *,
        ref: str | None = None,
        tool: str | None = None,
    ) -> None:
        where = f"tool {tool!r}: " if tool is not None else ""
        via = f" (ref:{ref})" if ref is not None else ""
        super().__init__(f"{where}argument {parameter!r}{via}: {detail}")
        self.parameter = parameter
        self.reason = reason
        self.detail = detail
        self.ref = ref
        self.tool = tool

    def for_tool(self, tool: str) -> RefProblem:
        """The same problem, its message naming ``tool``."""
        return RefProblem(self.parameter, self.reason, self.detail, ref=self.ref, tool=tool)


def ref_target(value: object) -> str | None:
    """The action id ``value`` refers to (``"ref:abc"`` → ``"abc"``), else ``None``.

    The prefix, then one word (no whitespace inside; whitespace around it is ignored): the
    words ``str.split`` finds, since a regular expression costs more, at every ref.
    """
    if not isinstance(value, str) or not value.startswith(REF_PREFIX):
        return None
    words = value[len(REF_PREFIX):].split()
    return words[0] if len(words) == 1 else None


def ref_keys(prop_schema: Mapping[str, Any], root_schema: Mapping[str, Any]) -> tuple[str, ...]:
    """The result keys an id parameter takes its value from (``x-sea-ref``), else ``()``."""
    for candidate in (prop_schema, resolve_schema_ref(prop_schema, root_schema)):
        keys = candidate.get(REF_KEYWORD)
        if isinstance(keys, str):
            keys = [keys]
        if isinstance(keys, list | tuple):
            found = tuple(k for k in keys if isinstance(k, str) and k)
            if found:
                return found
    return ()


def ref_lookups(
    prop_schema: Mapping[str, Any], root_schema: Mapping[str, Any]
) -> tuple[tuple[str, str], ...]:
    """The ``(result key, tool)`` pairs of an id parameter's ``x-sea-ref-lookup``, else ``()``."""
    for candidate in (prop_schema, resolve_schema_ref(prop_schema, root_schema)):
        found = candidate.get(LOOKUP_KEYWORD)
        if isinstance(found, Mapping):
            pairs = tuple((k, v) for k, v in found.items()
                          if isinstance(k, str) and k and isinstance(v, str) and v)
            if pairs:
                return pairs
    return ()


def check_not_a_ref(tool: str, name: str, value: object) -> None:
    """Refuse a value that is not a ref but looks like one or holds one.

    Raises:
        RefProblem: ``value`` is ``"ref:"`` naming no action (``malformed``), or holds a ref
            inside a list or an object (``nested``).
    """
    if isinstance(value, str):
        if value.startswith(REF_PREFIX) and not value.removeprefix(REF_PREFIX).strip():
            raise RefProblem(name, "malformed", f"{value!r} names no action", tool=tool)
        return
    stack: list[tuple[str, object]] = [(name, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend((f"{path}/{k}", v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}/{i}", v) for i, v in reversed(list(enumerate(item))))
        elif (target := ref_target(item)) is not None:
            raise RefProblem(
                name,
                "nested",
                f"{item!r} at {path} is inside the value; a ref must be a parameter's whole "
                "value (refs inside lists or objects are not supported)",
                ref=target,
                tool=tool,
            )


def to_string(
    parameter: str, value: object, types: frozenset[str], limit: int | None
) -> tuple[object, Normalization, str | None]:
    """What a string parameter (accepting ``types``, at most ``limit`` characters) receives
    of ``value`` by the ``string.*`` rules, the record of the rule, and no warning."""
    if value is not None and not isinstance(value, str) and accepts_value(types, value):
        # 5 for a string|integer parameter
        return value, rule_record(parameter, RULES.AS_IS, value, value), None
    text, rule, source = _text_of(value)
    if limit is not None and len(text) > limit:
        cut, kept = _cut(text, limit)
        detail = f"{source}; cut to {kept} of {len(text)} characters (limit {limit})"
        return cut, rule_record(parameter, RULES.STRING_TRUNCATED, value, cut, detail), None
    return text, rule_record(parameter, rule, value, text), None


def _text_of(value: object) -> tuple[str, str, str]:
    """The text a string parameter gets from ``value``, the rule, and where the text was."""
    if isinstance(value, str):
        return value, RULES.AS_IS, "string"
    if is_object(value):
        content = value.get("content")
        if isinstance(content, str):
            return content, RULES.STRING_CONTENT, "content"
        data = value.get("data")
        if isinstance(data, Mapping) and isinstance(data.get("content"), str):
            return str(data["content"]), RULES.STRING_DATA_CONTENT, "data.content"
        response = value.get("response")
        if isinstance(response, str):
            return response, RULES.STRING_RESPONSE, "response"
    return json_text(value), RULES.STRING_JSON, "JSON text"


def _cut(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to at most ``limit`` characters, the note included; and the kept count."""
    room = limit - len(TRUNCATION_NOTE.format(kept=limit, full=len(text)))
    if room < 0:  # not even the note fits
        kept = max(limit - 1, 0)
        return (text[:kept] + "…")[:limit], kept
    return text[:room] + TRUNCATION_NOTE.format(kept=room, full=len(text)), room


def max_length_of(prop: Mapping[str, Any], root: Mapping[str, Any]) -> int | None:
    """The longest string the schema accepts (the loosest ``anyOf``/``oneOf`` branch)."""
    prop = resolve_schema_ref(prop, root)
    limits: list[int] = []
    own = prop.get("maxLength")
    if isinstance(own, int) and not isinstance(own, bool) and own >= 0:
        limits.append(own)
    for member in prop.get("allOf") or ():
        if isinstance(member, Mapping) and (limit := max_length_of(member, root)) is not None:
            limits.append(limit)
    branches = [
        max_length_of(member, root)
        for keyword in ("anyOf", "oneOf")
        for member in prop.get(keyword) or ()
        if isinstance(member, Mapping)
        and (not accepted_types(member, root) or "string" in accepted_types(member, root))
    ]
    if branches and None not in branches:
        limits.append(max(n for n in branches if n is not None))
    return min(limits) if limits else None


def item_types_of(prop: Mapping[str, Any], root: Mapping[str, Any]) -> frozenset[str]:
    """The types the ``items`` schema of an array parameter declares (empty if it does not)."""
    prop = resolve_schema_ref(prop, root)
    items = prop.get("items")
    if isinstance(items, Mapping):
        return accepted_types(items, root)
    for keyword in ("anyOf", "oneOf"):
        for member in prop.get(keyword) or ():
            if isinstance(member, Mapping) and "array" in accepted_types(member, root):
                found = item_types_of(member, root)
                if found:
                    return found
    return frozenset()


def from_string(text: str, types: frozenset[str]) -> tuple[object, str] | None:
    """``text`` read as a boolean or a number when nothing is lost, else ``None``."""
    word = text.strip()
    if "boolean" in types and word.lower() in ("true", "false"):
        return word.lower() == "true", RULES.BOOLEAN_FROM_STRING
    if not types & {"integer", "number"} or not _JSON_NUMBER.fullmatch(word):
        return None
    if _JSON_INTEGER.fullmatch(word):
        if len(word) > _MAX_DIGITS:
            return None
        return int(word), RULES.NUMBER_FROM_STRING
    if "number" in types:
        number = float(word)
        return (number, RULES.NUMBER_FROM_STRING) if math.isfinite(number) else None
    exact = Decimal(word)
    if exact.adjusted() > _MAX_DIGITS or exact != exact.to_integral_value():
        return None
    return int(exact), RULES.NUMBER_FROM_STRING


SCALARS = frozenset({int, float, bool, type(None)})
"""Types of parameter values that are never a ref and hold none."""

JSON_VALUES = frozenset({str, int, float, bool, type(None), dict, list})
"""The Python types of parsed JSON, the ones JSON Schema's type keyword reads alike."""

_ANNOTATIONS = frozenset(
    {"type", "title", "description", "default", "examples", "deprecated", "readOnly",
     "writeOnly", "$comment"}
)
"""Keywords that constrain nothing but the type (``type``) or nothing at all."""


def type_only(prop: Mapping[str, Any]) -> bool:
    """Whether ``prop`` checks nothing but a declared type (annotations and ``x-`` keywords
    aside)."""
    declared = prop.get("type")
    if not (isinstance(declared, str) or (
        isinstance(declared, list) and all(isinstance(t, str) for t in declared)
    )):
        return False
    return all(key in _ANNOTATIONS or key.startswith("x-") for key in prop)


def is_object(value: object) -> TypeGuard[Mapping[str, Any]]:
    """Whether ``value`` is a JSON object (a dict, the usual case, asked first: cheaper than
    the mapping check)."""
    return type(value) is dict or isinstance(value, Mapping)


def accepts_value(types: frozenset[str], value: object) -> bool:
    """Whether one of the JSON ``types`` takes ``value`` (an integral float is an integer)."""
    actual = json_type(value)
    if actual in types or (actual == "integer" and "number" in types):
        return True
    return isinstance(value, float) and value.is_integer() and "integer" in types


def rule_record(
    parameter: str, rule: str, value: object, fitted: object, detail: str | None = None
) -> Normalization:
    """The record of ``rule`` turning ``value`` into ``fitted`` for ``parameter``."""
    return Normalization(parameter, rule, json_type(value), json_type(fitted), detail)


def result_of(ref: str | None) -> str:
    """The result a message speaks of: that of action ``ref``, when known."""
    return f"the result of action {ref!r}" if ref is not None else "the result"
