"""Refs between the actions of a pipeline: ``"ref:<action_id>"`` arguments, resolved and fitted.

In an action pipeline a model plans several tool calls in one answer; a later action's
parameter may be exactly the string ``"ref:<action_id>"``: it receives that earlier action's
raw result, normalized to the type the parameter's JSON Schema expects. This module applies
the rules of :mod:`sea.engine.tools.ref_rules` (where the table of rules is) to a tool's
parameters: :class:`ToolParameters` reads a tool's schema once, :func:`resolve_parameters`
replaces an action's refs by their fitted results, and :func:`type_guard` is the light check
run right before a call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from sea.engine.tools.arguments import accepted_types, preview, type_mismatch
from sea.engine.tools.ref_rules import (
    JSON_VALUES,
    LOOKUP_KEYWORD,
    REF_KEYWORD,
    REF_PREFIX,
    RULES,
    SCALARS,
    TRUNCATION_NOTE,
    Normalization,
    RefProblem,
    Rule,
    accepts_value,
    check_not_a_ref,
    from_string,
    is_object,
    item_types_of,
    max_length_of,
    ref_keys,
    ref_lookups,
    ref_target,
    result_of,
    rule_record,
    to_string,
    type_only,
)
from sea.jsontypes import json_type
from sea.lang.jsonschemas import SchemaValidator, validator

__all__ = [
    "LOOKUP_KEYWORD",
    "REF_KEYWORD",
    "REF_PREFIX",
    "TRUNCATION_NOTE",
    "Normalization",
    "Lookup",
    "ParameterFit",
    "RefProblem",
    "Rule",
    "ToolParameters",
    "normalize_to_schema",
    "ref_keys",
    "ref_target",
    "resolve_parameters",
    "type_guard",
]


def resolve_parameters(
    tool: str,
    schema: Mapping[str, Any],
    parameters: Mapping[str, object],
    results: Mapping[str, object],
    *,
    string_cap: int | None = None,
) -> tuple[dict[str, object], list[Normalization], list[str]]:
    """``parameters`` with every ref replaced by its fitted result.

    Args:
        tool: The tool's name, for messages.
        schema: The tool's argument schema (an object schema with ``properties``).
        parameters: The arguments the model planned for this action.
        results: The raw results of the earlier actions, by action id.
        string_cap: The most characters a string parameter may receive from a ref.

    Returns:
        The arguments for the call, one :class:`Normalization` per ref (in parameter order),
        and warnings (each naming the tool and the parameter).

    Raises:
        RefProblem: a ref is malformed, nested, unresolved, for an unknown parameter, or its
            result cannot be fitted.
    """
    return ToolParameters(tool, schema).resolve(parameters, results, string_cap=string_cap)


def normalize_to_schema(
    parameter: str,
    value: object,
    prop_schema: Mapping[str, Any],
    root_schema: Mapping[str, Any],
    *,
    string_cap: int | None,
    ref: str | None = None,
) -> tuple[object, Normalization, str | None]:
    """``value`` fitted to the parameter schema ``prop_schema`` by the module's rules.

    Args:
        parameter: The parameter's name, for the record and messages.
        value: The raw result.
        prop_schema: The parameter's schema.
        root_schema: The tool's whole argument schema (for ``$defs``).
        string_cap: The most characters a string parameter may receive (``None``: no cap).
        ref: The action id the value came from, for messages.

    Returns:
        The argument, the record of the rule applied, and a warning or ``None``.

    Raises:
        RefProblem: the value cannot be fitted (``no_id_key``, ``type_mismatch``, ``invalid``).
        ValueError: ``string_cap`` is negative.
    """
    fit = ParameterFit(parameter, prop_schema, root_schema)
    return fit.fit(value, string_cap=string_cap, ref=ref)


def type_guard(tool: str, schema: Mapping[str, Any], arguments: Mapping[str, object]) -> str | None:
    """``None``, or a message naming the first argument of a type ``schema`` does not accept.

    Only the top-level JSON type is checked (an integral float counts as an integer, as in
    JSON Schema); unknown arguments and ``None`` for an optional argument are left to
    ``prepare_arguments``. The message reads like its: ``tool 'search': argument 'limit'
    expects integer, got string ("five")``.
    """
    return ToolParameters(tool, schema).guard(arguments)


class ToolParameters:
    """A tool's argument schema read once for refs and the type guard.

    What :func:`resolve_parameters` and :func:`type_guard` work out from the schema on
    every call (each parameter's accepted types, kind, ``x-sea-ref`` keys, string limit,
    validator) is worked out here once per parameter, on first use, and kept: a runtime
    keeps one per tool (:class:`sea.engine.tools.box.Signature`), so a pipeline's actions
    pay only for the values they pass.

    Args:
        tool: The tool's name, for messages.
        schema: The tool's argument schema (an object schema with ``properties``); it must
            not change afterwards.
    """

    __slots__ = ("_fits", "_known", "_properties", "_required", "schema", "tool")

    def __init__(self, tool: str, schema: Mapping[str, Any]) -> None:
        self.tool = tool
        self.schema = schema
        self._properties: Mapping[str, Any] = schema.get("properties") or {}
        self._required = frozenset(schema.get("required") or ())
        self._known = ", ".join(self._properties) or "none"
        self._fits: dict[str, ParameterFit | None] = {}

    def parameter(self, name: str) -> ParameterFit | None:
        """The parameter ``name`` (None when the schema has no such parameter)."""
        try:
            return self._fits[name]
        except KeyError:
            prop = self._properties.get(name)
            fit = None
            if isinstance(prop, Mapping):
                fit = ParameterFit(name, prop, self.schema, required=name in self._required)
            self._fits[name] = fit
            return fit

    def lookups(
        self, parameters: Mapping[str, object], results: Mapping[str, object]
    ) -> list[Lookup]:
        """The look-ups the refs of ``parameters`` need (``x-sea-ref-lookup``): one for each
        id parameter whose ref's result is an object with none of its keys but a look-up
        key holding a non-empty string."""
        needed: list[Lookup] = []
        for name, value in parameters.items():
            target = ref_target(value)
            fit = None if target is None else self.parameter(name)
            if target is None or fit is None or not fit.lookups:
                continue
            found = results.get(target)
            if not is_object(found) or any(_present(found.get(key)) for key in fit.keys):
                continue
            for key, tool in fit.lookups:
                given = found.get(key)
                if isinstance(given, str) and given:
                    needed.append(Lookup(name, target, key, given, tool, fit.keys))
                    break
        return needed

    def resolve(
        self,
        parameters: Mapping[str, object],
        results: Mapping[str, object],
        *,
        string_cap: int | None = None,
    ) -> tuple[dict[str, object], list[Normalization], list[str]]:
        """:func:`resolve_parameters` for this tool."""
        arguments: dict[str, object] = {}
        records: list[Normalization] = []
        warnings: list[str] = []
        for name, value in parameters.items():
            if (isinstance(value, str) and not value.startswith(REF_PREFIX)) or (
                type(value) in SCALARS
            ):
                arguments[name] = value  # plain text or a number: neither a ref nor holds one
                continue
            target = ref_target(value)
            if target is None:
                check_not_a_ref(self.tool, name, value)
                arguments[name] = value
                continue
            fit = self.parameter(name)
            if fit is None:
                raise RefProblem(
                    name,
                    "unknown_parameter",
                    f"the tool has no such parameter (its parameters: {self._known})",
                    ref=target,
                    tool=self.tool,
                )
            if target not in results:
                known = ", ".join(results) or "none"
                raise RefProblem(
                    name,
                    "unresolved",
                    f"no earlier action {target!r} has a result (results so far: {known})",
                    ref=target,
                    tool=self.tool,
                )
            try:
                fitted, record, warning = fit.fit(
                    results[target], string_cap=string_cap, ref=target
                )
            except RefProblem as problem:
                raise problem.for_tool(self.tool) from None
            arguments[name] = fitted
            records.append(record)
            if warning is not None:
                warnings.append(f"tool {self.tool!r}: {warning}")
        return arguments, records, warnings

    def guard(self, arguments: Mapping[str, object]) -> str | None:
        """:func:`type_guard` for this tool."""
        for name, value in arguments.items():
            fit = self.parameter(name)
            if fit is None:
                continue
            types = fit.types
            if not types or accepts_value(types, value) or (value is None and not fit.required):
                continue
            return f"tool {self.tool!r}: argument {name!r} {type_mismatch(types, value)}"
        return None


@dataclass(frozen=True, slots=True)
class Lookup:
    """An id parameter's ref to a result without its keys, to be looked up with a tool.

    Attributes:
        parameter: The parameter.
        ref: The action whose result it refers to.
        key: The result's key that is looked up (``plan_id``).
        value: Its value, the tool's argument ``{key: value}``.
        tool: The tool that looks it up (``plan_get_state``).
        keys: The keys the parameter takes its value from (``x-sea-ref``).
    """

    parameter: str
    ref: str
    key: str
    value: str
    tool: str
    keys: tuple[str, ...]

    def merged(self, result: Mapping[str, Any], found: object) -> dict[str, Any]:
        """``result`` with the parameter's keys the tool's result ``found`` holds."""
        extra = {k: found[k] for k in self.keys if _present(found.get(k))} if is_object(
            found) else {}
        return {**result, **extra}


def _present(value: object) -> bool:
    return not (value is None or value == "" or value == [] or value == {})


class ParameterFit:
    """One parameter's schema read once: what a ref's result becomes for it.

    Args:
        name: The parameter's name, for the record and messages.
        prop: The parameter's schema.
        root: The tool's whole argument schema (for ``$defs``).
        required: The tool requires the parameter (for the type guard).
    """

    __slots__ = (
        "_check", "_plain", "item_types", "keys", "kind", "lookups", "max_length", "name",
        "prop", "required", "root", "types",
    )

    def __init__(
        self, name: str, prop: Mapping[str, Any], root: Mapping[str, Any], *,
        required: bool = False,
    ) -> None:
        self.name = name
        self.prop = prop
        self.root = root
        self.required = required
        self.keys = ref_keys(prop, root)
        self.lookups = ref_lookups(prop, root) if self.keys else ()
        self.types = accepted_types(prop, root)
        types = self.types
        if self.keys:
            self.kind = "id"
        elif "array" in types and not types & {"object", "string"}:
            self.kind = "array"
        elif "string" in types and not types & {"object", "array"}:
            self.kind = "string"
        else:
            self.kind = "other"
        self.max_length = max_length_of(prop, root) if self.kind == "string" else None
        self.item_types = item_types_of(prop, root) if self.kind == "array" else frozenset()
        self._plain = type_only(prop)
        self._check: SchemaValidator | None = None

    def fit(
        self, value: object, *, string_cap: int | None, ref: str | None = None
    ) -> tuple[object, Normalization, str | None]:
        """:func:`normalize_to_schema` for this parameter."""
        if string_cap is not None and string_cap < 0:
            raise ValueError(f"string_cap must be 0 or more, got {string_cap}")
        if self.kind == "id":
            return self._to_id(value, ref)
        if self.kind == "array":
            return self._to_array(value, ref)
        if self.kind == "string":
            limits = [n for n in (self.max_length, string_cap) if n is not None]
            return to_string(self.name, value, self.types, min(limits) if limits else None)
        fitted, rule = self._fit(value, ref)
        return fitted, rule_record(self.name, rule, value, fitted), None

    def _to_id(self, value: object, ref: str | None) -> tuple[object, Normalization, str | None]:
        parameter = self.name
        if not is_object(value):
            fitted, rule = self._fit(value, ref)
            return fitted, rule_record(parameter, rule, value, fitted), None
        for key in self.keys:
            picked = value.get(key)
            if picked is None or picked == "" or picked == [] or picked == {}:
                continue
            fitted, rule = self._fit(picked, ref)
            detail = key if rule == RULES.AS_IS else f"{key}, then {rule}"
            return fitted, rule_record(parameter, RULES.ID_KEY, value, fitted, detail), None
        present = ", ".join(str(k) for k in value) or "none"
        raise RefProblem(
            parameter,
            "no_id_key",
            f"{result_of(ref)} has none of {', '.join(self.keys)} (its keys: {present})",
            ref=ref,
        )

    def _to_array(
        self, value: object, ref: str | None
    ) -> tuple[object, Normalization, str | None]:
        parameter, types, item_types = self.name, self.types, self.item_types
        if value is not None and accepts_value(types, value):
            fitted = list(value) if isinstance(value, tuple) else value
            return fitted, rule_record(parameter, RULES.AS_IS, value, fitted), None
        if is_object(value) or (
            value is not None
            and item_types
            and "object" not in item_types
            and accepts_value(item_types, value)
        ):
            return [value], rule_record(parameter, RULES.ARRAY_WRAP, value, [value]), None
        fitted = [{"raw": value}]
        warning = (
            f"argument {parameter!r} expects an array; {result_of(ref)} is "
            f'{json_type(value)} ({preview(value)}), passed as [{{"raw": …}}]'
        )
        return fitted, rule_record(parameter, RULES.ARRAY_RAW, value, fitted), warning

    def _fit(self, value: object, ref: str | None) -> tuple[object, str]:
        """``value`` as it is if the schema accepts it, else converted losslessly, else
        refused."""
        types = self.types
        if (
            isinstance(value, float)
            and value.is_integer()
            and "integer" in types
            and "number" not in types
            and not self._problems(int(value))
        ):
            return int(value), RULES.INTEGER_FROM_NUMBER
        problems = self._problems(value)
        if not problems:
            return value, RULES.AS_IS
        if isinstance(value, str):
            converted = from_string(value, types)
            if converted is not None and not self._problems(converted[0]):
                return converted
        if types and not accepts_value(types, value):
            raise RefProblem(self.name, "type_mismatch", type_mismatch(types, value), ref=ref)
        best = best_match(problems)
        at = "/".join(str(p) for p in best.absolute_path)
        raise RefProblem(
            self.name,
            "invalid",
            f"got {json_type(value)} ({preview(value)}), which the parameter's schema "
            f"refuses: {best.message}" + (f" (at {at})" if at else ""),
            ref=ref,
        )

    def _problems(self, value: object) -> list[ValidationError]:
        """What the parameter schema (with the tool schema's ``$defs``) says against
        ``value``."""
        if self._plain and type(value) in JSON_VALUES and accepts_value(self.types, value):
            return []  # a schema of a type and annotations only: its type is all it checks
        check = self._check
        if check is None:
            schema = dict(self.prop)
            for key in ("$defs", "definitions"):
                if key in self.root and key not in schema:
                    schema[key] = self.root[key]
            check = self._check = validator(schema)
        return list(check.iter_errors(value))
