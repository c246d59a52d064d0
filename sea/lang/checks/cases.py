"""Case keys that can never match the type of the value compared.

The type comes from the ``response_schema`` that produces the field, or from the SAIVerse
rule that provides it (``tool_called`` is a boolean, :mod:`sea.lang.saiverse`). SAIVerse's
spelling of a boolean key, ``"True"``/``"False"``, matches a boolean (a warning says to write
``"true"``/``"false"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sea.jsontypes import json_type
from sea.lang import codes, saiverse
from sea.lang.checks.context import CheckContext
from sea.lang.checks.dataflow import Definitions, definitions, root_of
from sea.lang.checks.nodes import indexed, node_pointer
from sea.lang.conditions import DEFAULT_KEY, case_key_value
from sea.lang.hints import suggest
from sea.lang.issues import Issue, error, warning
from sea.lang.locate import escape_pointer
from sea.lang.models import Playbook
from sea.lang.node import ConditionalNext, Defined
from sea.lang.uses import Answer

_NUMERIC = {"integer", "number"}
_ORDERING = {"gt", "gte", "lt", "lte"}
_CONTAINERS = {"string", "array", "object"}


@dataclass(frozen=True)
class _Produced:
    """What a field can hold, as declared by the response_schema that produces it."""

    types: frozenset[str]
    enum: tuple[Any, ...] | None
    source: str


def subschema(schema: Any, path: list[str]) -> dict[str, Any] | None:
    """The schema of the value at ``path`` inside a value of ``schema`` (None: unknown)."""
    for segment in path:
        if not isinstance(schema, dict):
            return None
        if segment == "length" and schema.get("type") in ("array", "string"):
            return {"type": "integer"}
        properties = schema.get("properties")
        if segment.isdigit() and isinstance(schema.get("items"), dict):
            schema = schema["items"]
        elif isinstance(properties, dict):
            schema = properties.get(segment)
        else:
            return None
    return schema if isinstance(schema, dict) else None


def _describe(schema: dict[str, Any], source: str) -> _Produced | None:
    kind = schema.get("type")
    enum = schema.get("enum")
    if "const" in schema:
        enum = [schema["const"]]
    if isinstance(kind, str):
        types = frozenset([kind])
    elif isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        types = frozenset(kind)
    elif isinstance(enum, list):
        types = frozenset(json_type(v) for v in enum)
    else:
        return None
    return _Produced(types, tuple(enum) if isinstance(enum, list) else None, source)


def _answer_products(answer: Answer, root: str, rest: list[str]) -> list[dict[str, Any] | None]:
    schema = answer.schema
    found: list[dict[str, Any] | None] = []
    if answer.key == root:
        found.append(subschema(schema, rest))
    for source, target in answer.copies.items():
        if root_of(target) != root:
            continue
        extra = target.split(".")[1:]
        found.append(subschema(schema, answer.path(source) + extra + rest))
    return found


def producers(
    playbook: Playbook, defs: Definitions, others: set[str], field: str,
    provided: Sequence[saiverse.ProvidedVariable] | None = None,
    answers: Sequence[tuple[str, str, Answer]] | None = None,
) -> list[_Produced] | None:
    """What ``field`` can hold, if only response schemas define its root (else None).

    ``others`` are the roots something else defines (parameters, set, tool outputs);
    ``provided`` the SAIVerse rules of the playbook's nodes and ``answers`` their
    ``(type, id, answer)``, when the caller gathered them (once for every branch).
    """
    root, *rest = field.split(".")
    if root in others or root in defs.dynamic:
        return None
    produced: list[_Produced] = []
    rule = saiverse.rule_for(root, playbook.nodes, provided=provided)
    if rule is not None and rule.condition is not saiverse.Condition.ALWAYS:
        if rest:
            return None
        types = frozenset(rule.types)
        produced.append(_Produced(types, None, "set implicitly, as SAIVerse did"))
    if answers is None:
        answers = _answers(playbook)
    for node_type, node_id, answer in answers:
        for schema in _answer_products(answer, root, rest):
            source = f"{answer.schema_field} of {node_type} node `{node_id}`"
            described = _describe(schema, source) if schema else None
            if described is None:
                return None
            produced.append(described)
    if not produced or defs.names.get(root, "").startswith("the output_schema"):
        return None
    return produced


def _answers(playbook: Playbook) -> list[tuple[str, str, Answer]]:
    """``(type, id, answer)`` of every node that asks a model for a structured answer."""
    return [(node.node_type(), node.id, answer) for node in playbook.nodes
            if (answer := node.answer()) is not None]


def _other_roots(playbook: Playbook) -> set[str]:
    """Roots defined by parameters or by nodes other than by an answer schema."""
    roots = {param.name for param in playbook.input_schema}
    for node in playbook.nodes:
        answer = node.answer()
        typed = set() if answer is None else {
            root_of(key) for key in (answer.key, *answer.copies.values()) if key
        }
        roots.update(found.name for found in node.defines(None)
                     if isinstance(found, Defined) and found.name not in typed)
    return roots


def _key_can_match(key: str, produced: _Produced) -> bool:
    denoted = case_key_value(key)
    if denoted is None or key == "":
        return True
    for kind in produced.types:
        if kind == "string" and (produced.enum is None or key in produced.enum):
            return True
        if kind == "boolean" and isinstance(denoted, bool):
            return True
        if kind in _NUMERIC and isinstance(denoted, (int, float)) and not isinstance(denoted, bool):
            return kind == "number" or float(denoted).is_integer()
        if kind in ("object", "array", "null"):
            return True
    return False


def _key_hint(key: str, produced: _Produced) -> str:
    if "boolean" in produced.types:
        lowered = key.strip().lower()
        if lowered in ("true", "false"):
            return f'write the key as "{lowered}" (JSON booleans are lowercase)'
        return 'a boolean matches the keys "true" and "false"'
    if produced.enum is not None:
        allowed = [str(v) for v in produced.enum]
        return suggest(key, allowed) + "allowed: " + ", ".join(allowed)
    return "the value is " + " or ".join(sorted(produced.types))


def _python_boolean(operator: str, key: str, produced: list[_Produced]) -> bool:
    """``"True"``/``"False"`` compared (eq, ne) with a value that may be a boolean."""
    return (
        operator in ("eq", "ne")
        and saiverse.boolean_case_key(key) is not None
        and any("boolean" in p.types for p in produced)
    )


def _check_node(
    index: int, node_id: str, cond: ConditionalNext, produced: list[_Produced]
) -> list[Issue]:
    base = node_pointer(index, "conditional_next")
    source = ", ".join(dict.fromkeys(p.source for p in produced))
    types = " or ".join(sorted({t for p in produced for t in p.types}))
    issues: list[Issue] = []
    if cond.operator in _ORDERING and not any(p.types & _NUMERIC for p in produced):
        issues.append(
            warning(
                codes.ORDERING_ON_NON_NUMBER,
                f"`{cond.field}` is {types} ({source}); `{cond.operator}` "
                "compares numbers only",
                f"{base}/operator",
                node_id=node_id,
                hint="declare the field as integer or number, or compare with `eq`",
            )
        )
        return issues
    if cond.operator == "contains":
        if not any(p.types & _CONTAINERS for p in produced):
            issues.append(
                warning(
                    codes.CONTAINS_ON_SCALAR,
                    f"`{cond.field}` is {types} ({source}); `contains` looks inside strings, "
                    "lists and objects only, so no case matches",
                    f"{base}/operator",
                    node_id=node_id,
                    hint="compare with `eq`, or branch on a string, list or object",
                )
            )
        return issues
    for key in cond.cases:
        if key == DEFAULT_KEY or "{" in key:
            continue
        if cond.operator in _ORDERING:
            denoted = case_key_value(key)
            ok = isinstance(denoted, (int, float)) and not isinstance(denoted, bool)
        else:
            ok = any(_key_can_match(key, p) for p in produced)
        if ok:
            continue
        pointer = f"{base}/cases/{escape_pointer(key)}"
        if _python_boolean(cond.operator, key, produced):
            issues.append(
                warning(
                    codes.PYTHON_BOOLEAN_KEY,
                    f"case `{key}` is SAIVerse's spelling of a boolean: `{cond.field}` is "
                    f"{types} ({source}); it matches, as it did in SAIVerse",
                    pointer,
                    node_id=node_id,
                    at_key=True,
                    hint=f'write the key as "{saiverse.lowercase_case_key(key)}" (JSON booleans '
                    "are lowercase)",
                )
            )
            continue
        issues.append(
            error(
                codes.CASE_NEVER_MATCHES,
                f"case `{key}` can never match: `{cond.field}` is {types} ({source})",
                pointer,
                node_id=node_id,
                at_key=True,
                hint=_key_hint(key, produced[0]),
            )
        )
    return issues


def check_cases(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """Case keys against the type their field is declared with."""
    issues: list[Issue] = []
    defs: Definitions | None = None
    others: set[str] = set()
    provided: tuple[saiverse.ProvidedVariable, ...] = ()
    answers: list[tuple[str, str, Answer]] = []
    for index, node in indexed(playbook):
        cond = node.conditional_next
        if cond is None:
            continue
        if defs is None:  # once a playbook, not once a branch
            defs, others = definitions(playbook, context), _other_roots(playbook)
            provided = tuple(rule for each in playbook.nodes
                             for rule in saiverse.provided_by(each))
            answers = _answers(playbook)
        produced = producers(playbook, defs, others, cond.field, provided, answers)
        if produced:
            issues.extend(_check_node(index, node.id, cond, produced))
    return issues
