"""JSON Schema validation with linear-time patterns: the one place SEA builds a validator.

Model answers and tool arguments are hostile input, and the schemas they are checked against
(``response_schema``, tool argument schemas) may hold ``pattern`` and ``patternProperties``.
jsonschema runs those with Python's ``re``, which backtracks: ``^(a+)+$`` against thirty
``a`` and a ``!`` holds the GIL for about a minute per match and freezes the whole host
(other pulses, cancellation). :func:`validator`
builds a Draft 2020-12 validator whose regular expressions run on RE2 (``google-re2``),
whose time is linear in the text: every keyword that matches a regex is replaced
(``pattern``, ``patternProperties``, and ``additionalProperties`` and
``unevaluatedProperties``, which also match the ``patternProperties`` regexes). A pattern
RE2 cannot compile (a backreference, a lookaround) never falls back to ``re``: the value is
rejected with an error naming the pattern, and :func:`schema_problems` reports it before
anything runs (``sea validate``, the call path). The validator never fetches a remote
``$ref`` (jsonschema's default would): only the schema itself and the JSON Schema
metaschemas resolve.

RE2 reads a pattern much as JSON Schema's ECMA-262 does, closer than Python's ``re`` (``\\d``
and ``\\w`` are ASCII, ``$`` matches only at the end). jsonschema's ``format: regex`` is not
asserted (no format checker), as before.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Protocol

import orjson

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

__all__ = [
    "SchemaProblem",
    "SchemaValidator",
    "pattern_problem",
    "plainly_valid",
    "schema_problems",
    "validator",
]

_SHOWN = 60
"""Characters of an instance an error message shows."""

Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class _Unusable:
    """Why RE2 cannot run a pattern."""

    reason: str
    """What is wrong, said of the pattern (``is not a valid regular expression: …``)."""
    unsupported: bool
    """Python's ``re`` compiles it: a feature RE2 leaves out (backreference, lookaround)."""


@lru_cache(maxsize=1)
def _re2() -> tuple[Any, Any]:
    """The RE2 module and its options (imported on the first pattern: most schemas have
    none)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # a bad pattern is reported, not logged to stderr
    return re2, options


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    """The RE2 program of ``pattern``, or an :class:`_Unusable` saying why there is none."""
    re2, options = _re2()
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError, ValueError):
        return _Unusable(f"is not a valid regular expression: {reason}", unsupported=False)
    return _Unusable(
        f"uses a feature the linear-time regex engine (RE2) does not have: {reason}",
        unsupported=True,
    )


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used by SEA's validators (said of it: ``is not a valid
    regular expression: …``, ``uses a feature … RE2 does not have: …``), or None."""
    found = _compiled(pattern)
    return found.reason if isinstance(found, _Unusable) else None


def _shown(text: str) -> str:
    """``text`` for an error message: its repr, cut after :data:`_SHOWN` characters."""
    return repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + f"… ({len(text)} chars)"


def _search(pattern: str, text: str) -> bool | str:
    """Whether ``pattern`` matches somewhere in ``text``; the problem when it cannot run."""
    found = _compiled(pattern)
    if isinstance(found, _Unusable):
        return f"the pattern {pattern!r} cannot be used: it {found.reason}"
    return found.search(text) is not None


# -- keywords (each the same as jsonschema's, with RE2 in place of `re`) ---------------------


def _error(message: str) -> ValidationError:
    """A validation error (the keywords run only inside a validator, so jsonschema, imported
    on first use by :func:`validator`, is loaded)."""
    from jsonschema.exceptions import ValidationError

    return ValidationError(message)


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    matched = _search(pattern, instance)
    if isinstance(matched, str):
        yield _error(matched)
    elif not matched:
        yield _error(f"{_shown(instance)} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            matched = _search(pattern, key)
            if isinstance(matched, str):
                yield _error(matched)
                break
            if matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _matches_any(patterns: Any, key: str) -> bool:
    """Whether one of the ``patternProperties`` regexes matches ``key``."""
    return isinstance(patterns, Mapping) and any(_search(p, key) is True for p in patterns)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = [k for k in instance if k not in properties and not _matches_any(patterns, k)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        shown = ", ".join(repr(each) for each in sorted(extras))
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            regexes = ", ".join(repr(each) for each in sorted(patterns))
            yield _error(f"{shown} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield _error(f"Additional properties are not allowed ({shown} {verb} "
                                  "unexpected)")


def _unevaluated_properties(
    validator: Any, unevaluated: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    rejected = [
        key
        for key in instance
        if key not in evaluated
        and next(validator.descend(instance[key], unevaluated, path=key, schema_path=key), None)
        is not None
    ]
    if not rejected:
        return
    shown = ", ".join(repr(each) for each in sorted(rejected, key=str))
    verb = "was" if len(rejected) == 1 else "were"
    if unevaluated is False:
        yield _error(f"Unevaluated properties are not allowed ({shown} {verb} "
                              "unexpected)")
    else:
        yield _error(f"Unevaluated properties are not valid under the given schema "
                              f"({shown} {verb} unevaluated and invalid)")


def _valid(errors: Iterator[ValidationError]) -> bool:
    """Whether a validation yields no error (only the first is computed)."""
    return next(errors, None) is None


def _evaluated_keys(validator: Any, instance: Any, schema: Any) -> set[str]:
    """The keys of ``instance`` that ``schema`` evaluates (jsonschema's own walk, with
    ``patternProperties`` matched by RE2)."""
    if validator.is_type(schema, "boolean"):
        return set()
    keys = _referenced_keys(validator, instance, schema)
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        subschema = schema.get(keyword)
        if subschema is not None:
            keys |= {k for k, v in instance.items() if _valid(validator.descend(v, subschema))}
    patterns = schema.get("patternProperties")
    if patterns:
        keys |= {key for key in instance if _matches_any(patterns, key)}
    for name, subschema in (schema.get("dependentSchemas") or {}).items():
        if name in instance:
            keys |= _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _valid(validator.descend(instance, subschema)):
                keys |= _evaluated_keys(validator, instance, subschema)
    return keys | _conditional_keys(validator, instance, schema)


def _referenced_keys(validator: Any, instance: Any, schema: Any) -> set[str]:
    """The keys the schemas of ``$ref`` and ``$dynamicRef`` evaluate."""
    keys: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if ref is not None:
            resolved = validator._resolver.lookup(ref)
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            keys |= _evaluated_keys(inner, instance, resolved.contents)
    return keys


def _conditional_keys(validator: Any, instance: Any, schema: Any) -> set[str]:
    """The keys ``if`` and the branch it chooses (``then``, ``else``) evaluate."""
    if "if" not in schema:
        return set()
    if validator.evolve(schema=schema["if"]).is_valid(instance):
        keys = _evaluated_keys(validator, instance, schema["if"])
        if "then" in schema:
            keys |= _evaluated_keys(validator, instance, schema["then"])
        return keys
    if "else" in schema:
        return _evaluated_keys(validator, instance, schema["else"])
    return set()


def _any_of(
    validator: Any, members: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """``anyOf``, trying only the member a tagged union's tag picks.

    A tagged union is an ``anyOf`` whose members are all ``{"type": "object"}`` schemas that
    require one same property (the tag) and each give it a string of its own (``const``,
    or an ``enum`` of one): an action plan's actions, one member per tool. An object whose
    tag is member *i*'s string can pass member *i* only (every other one refuses its tag),
    so checking member *i* alone gives the same verdict, and its errors say what is wrong
    inside that member. jsonschema's ``anyOf`` tries every member until one passes,
    gathering every error of the others: for a plan of 16 actions of 4 tools, most of its
    check. Anything else (another instance, another ``anyOf``) is checked as jsonschema
    checks it.
    """
    if type(instance) is dict and isinstance(members, list):
        tagged = _tagged(members)
        if tagged is not None:
            tag, positions = tagged
            value = instance.get(tag)
            index = positions.get(value) if type(value) is str else None
            if index is not None:
                yield from validator.descend(instance, members[index], schema_path=index)
                return
    from jsonschema import _keywords

    every: Any = _keywords.anyOf  # a generator function (typed as returning None)
    yield from every(validator, members, instance, schema)


_TAGS: dict[int, tuple[list[Any], tuple[str, dict[str, int]] | None]] = {}
"""The tag of each ``anyOf`` list seen, by the list's id (the list is kept with it, so its id
stays its own)."""
_MAX_TAGS = 4096


def _tagged(members: list[Any]) -> tuple[str, dict[str, int]] | None:
    """The tag of the union ``members`` and each tag value's member, or None if it is none."""
    found = _TAGS.get(id(members))
    if found is not None and found[0] is members:
        return found[1]
    if len(_TAGS) >= _MAX_TAGS:
        _TAGS.clear()
    tagged = _tag_of(members)
    _TAGS[id(members)] = (members, tagged)
    return tagged


_TAG_NOTES = frozenset(("title", "description", "$comment"))


def _tag_of(members: list[Any]) -> tuple[str, dict[str, int]] | None:
    if len(members) < 2 or not all(
        isinstance(m, Mapping) and m.get("type") == "object"
        and isinstance(m.get("properties"), Mapping) and isinstance(m.get("required"), list)
        for m in members
    ):
        return None
    for tag in members[0]["required"]:
        positions: dict[str, int] = {}
        for index, member in enumerate(members):
            value = _only_value(member["properties"].get(tag))
            if tag not in member["required"] or not isinstance(value, str) or value in positions:
                break
            positions[value] = index
        else:
            return str(tag), positions
    return None


def _only_value(prop: Any) -> Any:
    """The one value ``prop`` allows (``const``, or an ``enum`` of one), else None."""
    if not isinstance(prop, Mapping):
        return None
    keys = set(prop) - _TAG_NOTES
    if keys == {"const"}:
        return prop["const"]
    if keys == {"enum"} and isinstance(prop["enum"], list) and len(prop["enum"]) == 1:
        return prop["enum"][0]
    return None


@lru_cache(maxsize=1)
def _linear_validator() -> tuple[Any, Any]:
    """The validator class whose regex keywords run on RE2, and the registry it resolves
    ``$ref``s in: none is retrieved, a ``$ref`` resolves within the schema (and the
    metaschemas) or not at all. Built on first use: importing jsonschema and referencing
    costs a start-up more than checking every bundled playbook."""
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry

    extended = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator,
        {
            "anyOf": _any_of,
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
            "unevaluatedProperties": _unevaluated_properties,
        },
    )
    local_only: Registry[Any] = Registry()
    return extended, local_only


class SchemaValidator(Protocol):
    """What SEA uses of a validator (a jsonschema validator object)."""

    def iter_errors(self, instance: Any) -> Iterator[ValidationError]:
        """Every way ``instance`` fails the schema."""
        ...

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` passes the schema."""
        ...


def validator(schema: Mapping[str, Any] | bool) -> SchemaValidator:
    """A JSON Schema 2020-12 validator of ``schema`` whose patterns run on RE2.

    Every validator of a schema SEA does not own (response schemas, tool argument schemas,
    action plans built from them) comes from here. The schema is assumed valid; check it
    with :func:`schema_problems` (and the metaschema) first.
    """
    if isinstance(schema, bool):
        return _built(schema)
    try:
        text = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # not JSON (a caller's mistake the checks report): not kept
        return _built(schema)
    return _kept(text)


KEPT_VALIDATORS = 256
"""The validators of this many schemas (by their JSON text) are kept: the same response
schema or tool schema, asked again by every call, is not made into a validator again."""


@lru_cache(maxsize=KEPT_VALIDATORS)
def _kept(text: bytes) -> SchemaValidator:
    return _built(orjson.loads(text))


def _built(schema: Mapping[str, Any] | bool) -> SchemaValidator:
    linear, local_only = _linear_validator()
    built: SchemaValidator = linear(schema, registry=local_only)
    return built


def _is_type(instance: Any, name: Any) -> bool:
    """Whether ``instance`` surely has the JSON type ``name`` as jsonschema sees it (``1.0``
    is an integer, ``True`` no number)."""
    simple = {"null": type(None), "boolean": bool, "string": str, "array": list, "object": dict}
    if name in simple:
        return isinstance(instance, simple[name])
    if isinstance(instance, bool):
        return False
    if name == "number":
        return isinstance(instance, (int, float))
    return name == "integer" and (
        isinstance(instance, int) or isinstance(instance, float) and instance.is_integer()
    )


_BOUNDS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": operator.ge, "maximum": operator.le,
    "exclusiveMinimum": operator.gt, "exclusiveMaximum": operator.lt,
}
_JSON = (type(None), bool, int, float, str, list, dict)


def _plain_keyword(instance: Any, keyword: str, value: Any) -> bool:
    """Whether one keyword surely accepts ``instance`` (False: maybe not)."""
    if not isinstance(instance, _JSON):
        return False
    if keyword == "type":
        return any(_is_type(instance, name) for name in (value if isinstance(value, list)
                                                         else [value]))
    if keyword in _BOUNDS:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        if isinstance(instance, bool) or not isinstance(instance, (int, float)):
            return True  # applies to numbers only
        return _BOUNDS[keyword](instance, value)
    if keyword in ("minLength", "maxLength"):
        if type(value) is not int:
            return False
        if not isinstance(instance, str):
            return True  # applies to strings only
        return len(instance) >= value if keyword == "minLength" else len(instance) <= value
    if keyword == "anyOf":
        return isinstance(value, list) and any(_plainly(instance, each) for each in value)
    if keyword == "items":
        return not isinstance(instance, list) or all(_plainly(each, value) for each in instance)
    if keyword == "enum":
        return isinstance(instance, str) and isinstance(value, list) and any(
            isinstance(each, str) and each == instance for each in value
        )
    return keyword in _ANNOTATIONS or keyword.startswith("x-")


_ANNOTATIONS = frozenset(("title", "description", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly"))


def plainly_valid(instance: Any, schema: Mapping[str, Any]) -> bool:
    """True only when ``schema`` accepts ``instance``; False when it may not (then ask
    :func:`validator`). It judges the simple schemas tool arguments mostly have (``type``,
    bounds, lengths, a string ``enum``, ``anyOf``, ``items``, annotations) without importing
    jsonschema; a test checks that what it accepts, the validator accepts."""
    return all(_plain_keyword(instance, keyword, value) for keyword, value in schema.items())


def _plainly(instance: Any, schema: Any) -> bool:
    """:func:`plainly_valid` of a subschema, which may be ``true``."""
    return schema is True or isinstance(schema, dict) and plainly_valid(instance, schema)


# -- static problems of a schema -------------------------------------------------------------

_SINGLE = (
    "additionalProperties", "unevaluatedProperties", "items", "contains", "propertyNames",
    "not", "if", "then", "else", "unevaluatedItems",
)
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """A problem of a schema found before it is used.

    Attributes:
        path: Where, as keys and indices from the schema's root.
        message: What is wrong, in one sentence.
        kind: ``unsupported_pattern`` (RE2 lacks a feature the pattern uses),
            ``invalid_pattern`` (no regex at all) or ``unresolved_ref``.
    """

    path: Path
    message: str
    kind: Literal["unsupported_pattern", "invalid_pattern", "unresolved_ref"]


def _subschemas(schema: Mapping[str, Any], path: Path) -> Iterator[tuple[Any, Path]]:
    for key in _SINGLE:
        if key in schema:
            yield schema[key], (*path, key)
    for key in _MAPS:
        children = schema.get(key)
        if isinstance(children, Mapping):
            for name, child in children.items():
                yield child, (*path, key, name)
    for key in _LISTS:
        children = schema.get(key)
        if isinstance(children, list):
            for i, child in enumerate(children):
                yield child, (*path, key, i)


def _pattern_issue(pattern: str, path: Path) -> SchemaProblem | None:
    found = _compiled(pattern)
    if not isinstance(found, _Unusable):
        return None
    kind: Literal["unsupported_pattern", "invalid_pattern"] = (
        "unsupported_pattern" if found.unsupported else "invalid_pattern"
    )
    return SchemaProblem(path, f"the pattern `{pattern}` {found.reason}", kind)


def _ref_issue(resolver: Any, ref: str, path: Path) -> SchemaProblem | None:
    from referencing.exceptions import Unresolvable

    try:
        resolver.lookup(ref)
    except Unresolvable:
        where = "outside the schema (remote references are not fetched)"
        if ref.startswith("#"):
            where = "within the schema"
        return SchemaProblem(path, f"`$ref` `{ref}` does not resolve {where}", "unresolved_ref")
    return None


def _nodes(schema: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every schema object in ``schema`` (the places :func:`schema_problems` walks)."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            yield node
            stack.extend(child for child, _ in _subschemas(node, ()))


def _resource(schema: Mapping[str, Any]) -> Any:
    from referencing.jsonschema import DRAFT202012

    return DRAFT202012.create_resource(schema)


def _resolver(schema: Mapping[str, Any]) -> Any:
    """A resolver of the ``$ref``s in ``schema`` (nothing is retrieved)."""
    from referencing import Registry

    return Registry().resolver_with_root(_resource(schema))


def schema_problems(schema: Any) -> list[SchemaProblem]:
    """Patterns RE2 cannot run and ``$ref``s that do not resolve, anywhere in ``schema``.

    Only the places that hold schemas are walked (not ``enum``, ``const``, ``default``…),
    iteratively. The metaschema's own checks are not repeated here.
    """
    if not isinstance(schema, Mapping):
        return []
    # a schema without `$ref` needs no resolver (nor the import of `referencing`)
    refers = any(isinstance(node.get("$ref"), str) for node in _nodes(schema))
    root = _resolver(schema) if refers else None
    problems: list[SchemaProblem] = []
    stack: list[tuple[Any, Path, Any]] = [(schema, (), root)]
    while stack:
        node, path, resolver = stack.pop()
        if not isinstance(node, Mapping):
            continue
        if resolver is not None and path and isinstance(node.get("$id"), str):
            resolver = resolver.in_subresource(_resource(node))
        pattern = node.get("pattern")
        if isinstance(pattern, str) and (found := _pattern_issue(pattern, (*path, "pattern"))):
            problems.append(found)
        patterns = node.get("patternProperties")
        for key in patterns if isinstance(patterns, Mapping) else ():
            if found := _pattern_issue(key, (*path, "patternProperties", key)):
                problems.append(found)
        ref = node.get("$ref")
        if isinstance(ref, str) and (found := _ref_issue(resolver, ref, (*path, "$ref"))):
            problems.append(found)
        stack.extend((child, where, resolver) for child, where in _subschemas(node, path))
    problems.sort(key=lambda p: [str(part) for part in p.path])
    return problems
