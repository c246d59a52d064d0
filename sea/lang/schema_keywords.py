"""The JSON Schema keywords SEA's validators run their own way (:mod:`sea.lang.jsonschemas`).

Each is the same as jsonschema's, with RE2 in place of ``re`` (``pattern``,
``patternProperties``, and ``additionalProperties`` and ``unevaluatedProperties``, which also
match the ``patternProperties`` regexes: :mod:`sea.lang.linear_regex`), and ``anyOf``, which
checks a tagged union's one member its tag picks. :data:`LINEAR_KEYWORDS` is what a validator
class is extended with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from sea.lang.linear_regex import search, shown

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError


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
    matched = search(pattern, instance)
    if isinstance(matched, str):
        yield _error(matched)
    elif not matched:
        yield _error(f"{shown(instance)} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            matched = search(pattern, key)
            if isinstance(matched, str):
                yield _error(matched)
                break
            if matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _matches_any(patterns: Any, key: str) -> bool:
    """Whether one of the ``patternProperties`` regexes matches ``key``."""
    return isinstance(patterns, Mapping) and any(search(p, key) is True for p in patterns)


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


LINEAR_KEYWORDS: dict[str, Callable[..., Iterator[ValidationError]]] = {
    "anyOf": _any_of,
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unevaluated_properties,
}
"""The keywords a Draft 2020-12 validator class is extended with, by name."""
