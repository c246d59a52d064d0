"""SAIVerse compatibility: the rules SAIVerse's runtime applied without the playbook saying so.

SEA reads the SAIVerse playbook format. SAIVerse's runtime also did things a playbook never
wrote down: some nodes set variables nobody declared, a callee received an ``input`` nobody
passed, a boolean matched the case key ``"True"``. This module states each of those rules
once, as data, and is the only place that knows them:

* the static checks (:mod:`sea.lang.checks`) read it to know which variables exist and
  which case keys match;
* the runtime (:mod:`sea.nodes`, :mod:`sea.engine`) reads it to set the same variables with
  SAIVerse's values and JSON types, and to fill the implicit arguments;
* ``sea migrate`` reads it to rewrite a playbook into explicit SEA form.

The rules:

:data:`RUN_VARIABLES`
    Defined in every run before the first node (``metadata``, ``last``).
:data:`NODE_VARIABLES`
    Node type → the variables a node of that type provides, each with its JSON types and
    the :class:`Condition` under which it does (see :func:`provided_by` for one node).
:data:`IMPLICIT_ARGUMENTS`
    Node type → the arguments a callee receives without ``args`` naming them (``input``:
    ``args.input``, else the caller's ``input``, else the caller's ``last``).
:data:`BOOLEAN_CASE_KEYS`
    The Python spellings of booleans SAIVerse matched (it compared ``str(value)``): ``"True"``
    and ``"False"`` match a boolean here too, with a warning (write ``"true"``/``"false"``).
:data:`RENAMED_FIELDS`
    Node type → field names SAIVerse silently dropped, and the SEA field they meant.
:data:`DYNAMIC_CALL_TYPES`
    Node types whose callee is chosen at run time: a variable only such a callee can produce
    is a warning naming the possible callees, not an error.
:func:`untyped`
    A parameter declared without a type takes any JSON value: SAIVerse never checked
    argument types, and its ``param_type`` cannot say "array" or "object" (a router's
    ``executed_playbooks`` list). Declare ``type`` to have the argument checked.

The values the runtime gives (pure functions, so engine and tests share them):
:func:`run_defaults` (``metadata`` → ``{}``), :func:`set_node_values` (``executed_playbooks``
created), :func:`appended_after_call` (a callee's name appended), :func:`tool_mode_values`
(an ``llm`` node's tool-mode variables), :func:`implicit_argument` (an implicit argument's
value). For one node, :func:`provided_by` and :func:`provided_names` say what it provides;
:func:`rule_for` finds the rule behind a variable name.

Everything public is listed in ``__all__``; the names are stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final, Literal

__all__ = [
    "BOOLEAN_CASE_KEYS",
    "DYNAMIC_CALL_TYPES",
    "EXECUTED_PLAYBOOKS",
    "EXECUTED_PLAYBOOKS_INIT",
    "IMPLICIT_ARGUMENTS",
    "NODE_VARIABLES",
    "RENAMED_FIELDS",
    "RUN_VARIABLES",
    "TOOL_ARG_PREFIX",
    "Condition",
    "Effect",
    "ImplicitArgument",
    "JsonType",
    "ProvidedVariable",
    "appended_after_call",
    "boolean_case_key",
    "condition_holds",
    "implicit_argument",
    "implicit_arguments",
    "lowercase_case_key",
    "provided_by",
    "provided_names",
    "rule_for",
    "run_defaults",
    "set_node_values",
    "tool_mode_values",
    "untyped",
]

JsonType = Literal["string", "number", "integer", "boolean", "array", "object", "null"]
"""A JSON Schema type name; a variable's value has one of its rule's ``types``."""

EXECUTED_PLAYBOOKS: Final = "executed_playbooks"
"""The list of the playbooks this run's ``exec`` nodes ran, in order."""
EXECUTED_PLAYBOOKS_INIT: Final = "executed_playbooks_init"
"""The ``set`` assignment that creates :data:`EXECUTED_PLAYBOOKS` as ``[]`` (when true)."""
TOOL_ARG_PREFIX: Final = "tool_arg_"
"""``tool_arg_<name>``: one variable per argument of the tool call an ``llm`` node chose."""


class Condition(StrEnum):
    """When a rule applies (a fact about the node, checked by :func:`condition_holds`)."""

    ALWAYS = "always"
    """Every run (run variables) or every node of the type."""
    EXECUTED_PLAYBOOKS_INIT = "executed_playbooks_init"
    """A ``set`` node whose ``assignments`` holds ``"executed_playbooks_init": true``."""
    AVAILABLE_TOOLS = "available_tools"
    """An ``llm`` node with a non-empty ``available_tools`` (tool mode)."""
    SUBAGENT = "subagent"
    """A ``subplay`` or ``exec`` node with ``"execution": "subagent"``."""
    CALL_SUCCEEDED = "call_succeeded"
    """An ``exec`` node whose callee ran to its end (statically: every ``exec`` node)."""


class Effect(StrEnum):
    """What a rule does to its variable."""

    DEFINES = "defines"
    """Sets the variable (creates it when absent)."""
    APPENDS = "appends"
    """Appends to the list the variable holds, only when it exists (it never creates it)."""


@dataclass(frozen=True, slots=True)
class ProvidedVariable:
    """A variable SAIVerse's runtime provided without the playbook defining it."""

    name: str
    """The variable's name; with ``prefix``, the start of a family of names."""
    types: tuple[JsonType, ...]
    """The JSON types its value may have (``null``: set to null in some cases)."""
    condition: Condition
    """When the node (or the run) provides it."""
    description: str
    """What it holds, in SAIVerse's terms (for messages and documentation)."""
    effect: Effect = Effect.DEFINES
    prefix: bool = False
    """``name`` is a prefix: ``tool_arg_`` stands for ``tool_arg_<argument name>``."""
    owner: Literal["engine", "host"] = "engine"
    """Who gives it its run-time value: the engine itself, or the host's ports (a
    subagent's chronicle comes from the memory store)."""

    def matches(self, variable: str) -> bool:
        """This rule provides ``variable`` (exactly, or as a member of its family)."""
        if self.prefix:
            return variable.startswith(self.name) and len(variable) > len(self.name)
        return variable == self.name

    @property
    def defines(self) -> bool:
        """The rule defines its variable (rather than only updating an existing one)."""
        return self.effect is Effect.DEFINES


@dataclass(frozen=True, slots=True)
class ImplicitArgument:
    """An argument a callee receives although the calling node's ``args`` do not name it."""

    name: str
    """The callee's parameter."""
    sources: tuple[str, ...]
    """Where the value comes from, the first that is present and not empty: ``args.<key>``
    (the node's own arguments), else a caller variable by name."""
    description: str
    text: bool = True
    """The value is passed as text (a structure from ``last`` as its JSON)."""


RUN_VARIABLES: Final[tuple[ProvidedVariable, ...]] = (
    ProvidedVariable(
        "metadata",
        ("object",),
        Condition.ALWAYS,
        "The metadata of the user message that started the pulse; `{}` when there is none "
        "(a playbook's own `metadata` parameter, when it declares one, takes precedence).",
    ),
    ProvidedVariable(
        "last",
        ("string", "number", "integer", "boolean", "array", "object", "null"),
        Condition.ALWAYS,
        "The result of the most recent node that produced one (the run's input at the start).",
    ),
)
"""Variables every playbook run has before its first node."""

_TOOL_MODE = Condition.AVAILABLE_TOOLS

_CHRONICLE = ProvidedVariable(
    "_subagent_chronicle",
    ("string",),
    Condition.SUBAGENT,
    "The summary of what the subagent did, after a subagent call.",
    owner="host",
)
"""What a subagent call (``subplay`` or ``exec``) gives back."""

NODE_VARIABLES: Final[Mapping[str, tuple[ProvidedVariable, ...]]] = MappingProxyType(
    {
        "set": (
            ProvidedVariable(
                EXECUTED_PLAYBOOKS,
                ("array",),
                Condition.EXECUTED_PLAYBOOKS_INIT,
                "Created as `[]` (when absent) by a set node assigning "
                "`executed_playbooks_init: true`; a list of playbook names.",
            ),
        ),
        "llm": (
            ProvidedVariable(
                "tool_called", ("boolean",), _TOOL_MODE, "Whether the model chose a tool."
            ),
            ProvidedVariable(
                "has_speak_content",
                ("boolean",),
                _TOOL_MODE,
                "Whether the model answered with text (with or without a tool call).",
            ),
            ProvidedVariable(
                "speak_content",
                ("string",),
                _TOOL_MODE,
                "The text of the model's answer (empty when it only called a tool).",
            ),
            ProvidedVariable(
                "tool_name",
                ("string", "null"),
                _TOOL_MODE,
                "The name of the tool the model chose (null when it chose none).",
            ),
            ProvidedVariable(
                "tool_args",
                ("object", "null"),
                _TOOL_MODE,
                "The arguments of the chosen tool call (null when it chose none).",
            ),
            ProvidedVariable(
                TOOL_ARG_PREFIX,
                ("string", "number", "integer", "boolean", "array", "object", "null"),
                _TOOL_MODE,
                "`tool_arg_<name>`: the argument `<name>` of the chosen tool call.",
                prefix=True,
            ),
        ),
        "exec": (
            ProvidedVariable(
                EXECUTED_PLAYBOOKS,
                ("array",),
                Condition.CALL_SUCCEEDED,
                "The callee's name is appended after it ran, when the list exists.",
                effect=Effect.APPENDS,
            ),
            _CHRONICLE,
        ),
        "subplay": (
            _CHRONICLE,
        ),
    }
)
"""Node type → the variables its nodes provide (each under its :class:`Condition`)."""

_INPUT = ImplicitArgument(
    "input",
    ("args.input", "input", "last"),
    "A callee's `input` is the node's `args.input`, else the caller's `input`, else the "
    "caller's `last` (the first that is present and not empty).",
)

IMPLICIT_ARGUMENTS: Final[Mapping[str, tuple[ImplicitArgument, ...]]] = MappingProxyType(
    {"subplay": (_INPUT,), "exec": (_INPUT,)}
)
"""Node type → the arguments its callee receives implicitly."""

BOOLEAN_CASE_KEYS: Final[Mapping[str, bool]] = MappingProxyType({"True": True, "False": False})
"""Case key → the boolean it matches (SAIVerse compared ``str(value)``). A warning names the
key; its lowercase form is the SEA spelling."""

RENAMED_FIELDS: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {"llm": MappingProxyType({"tools": "available_tools"})}
)
"""Node type → field SAIVerse silently dropped → the SEA field it meant."""

DYNAMIC_CALL_TYPES: Final[frozenset[str]] = frozenset({"exec"})
"""Node types whose callee is chosen at run time (its name is read from the state)."""


def _field(node: Any, name: str) -> Any:
    return getattr(node, name, None)


def condition_holds(condition: Condition, node: Any) -> bool:
    """Whether ``condition`` holds for ``node`` (a node model, as far as can be known
    before running: :attr:`Condition.CALL_SUCCEEDED` holds for every node)."""
    if condition in (Condition.ALWAYS, Condition.CALL_SUCCEEDED):
        return True
    if condition is Condition.EXECUTED_PLAYBOOKS_INIT:
        assignments = _field(node, "assignments") or {}
        return bool(assignments.get(EXECUTED_PLAYBOOKS_INIT))
    if condition is Condition.AVAILABLE_TOOLS:
        return bool(_field(node, "available_tools"))
    return bool(_field(node, "execution") == "subagent")


def provided_by(node: Any) -> tuple[ProvidedVariable, ...]:
    """The rules of :data:`NODE_VARIABLES` that apply to this node (by its ``type``)."""
    rules = NODE_VARIABLES.get(str(_field(node, "type")), ())
    return tuple(rule for rule in rules if condition_holds(rule.condition, node))


def provided_names(node: Any) -> Iterator[str]:
    """The variables this node defines by a SAIVerse rule (families excluded: a
    ``tool_arg_<name>`` is known only at run time; use :func:`rule_for` for those)."""
    for rule in provided_by(node):
        if rule.defines and not rule.prefix:
            yield rule.name


def rule_for(variable: str, nodes: Any = (), *,
             provided: Sequence[ProvidedVariable] | None = None) -> ProvidedVariable | None:
    """The rule that defines ``variable``: a run variable, else a rule of one of ``nodes``
    (of every node type when ``nodes`` is empty); None when no SAIVerse rule defines it.
    ``provided``: the rules of ``nodes`` already gathered (:func:`provided_by` of each), for
    a caller that asks about many variables of one playbook."""
    for rule in RUN_VARIABLES:
        if rule.matches(variable):
            return rule
    candidates: Iterable[ProvidedVariable] = (
        provided if provided is not None
        else (rule for node in nodes for rule in provided_by(node))
        if nodes
        else (rule for rules in NODE_VARIABLES.values() for rule in rules)
    )
    for rule in candidates:
        if rule.defines and rule.matches(variable):
            return rule
    return None


def run_defaults() -> dict[str, Any]:
    """The value of each run variable of :data:`RUN_VARIABLES` that the engine does not keep
    itself, for a run that was not given one: ``metadata`` → ``{}`` (a fresh object)."""
    return {"metadata": {}}


def set_node_values(scope: Mapping[str, Any]) -> dict[str, Any]:
    """What a ``set`` node provides besides its assignments, given the variables after them
    (``scope``): ``executed_playbooks = []`` when ``executed_playbooks_init`` is true and the
    list does not exist yet (SAIVerse checked the whole state after every set node)."""
    if scope.get(EXECUTED_PLAYBOOKS_INIT) and scope.get(EXECUTED_PLAYBOOKS) is None:
        return {EXECUTED_PLAYBOOKS: []}
    return {}


def appended_after_call(scope: Mapping[str, Any], callee: str) -> dict[str, Any]:
    """What a successful ``exec`` of ``callee`` updates: ``executed_playbooks`` with the
    callee's name appended, when that list exists (a new list; nothing otherwise)."""
    executed = scope.get(EXECUTED_PLAYBOOKS)
    if isinstance(executed, list):
        return {EXECUTED_PLAYBOOKS: [*executed, callee]}
    return {}


def implicit_arguments(node_type: str) -> tuple[ImplicitArgument, ...]:
    """The implicit arguments of a node type's calls."""
    return IMPLICIT_ARGUMENTS.get(node_type, ())


def _present(value: Any) -> bool:
    return value is not None and value != ""


def implicit_argument(
    rule: ImplicitArgument, args: Mapping[str, Any], caller: Mapping[str, Any]
) -> Any:
    """The value of an implicit argument: its first present, non-empty source (``None`` if
    none is). ``args``: the node's rendered arguments; ``caller``: the caller's variables."""
    for source in rule.sources:
        if source.startswith("args."):
            value = args.get(source[len("args.") :])
        else:
            value = caller.get(source)
        if _present(value):
            return value
    return None


def untyped(param: Any) -> bool:
    """The parameter declares no type (neither ``type`` nor ``param_type``), so its argument
    may be any JSON value, as in SAIVerse."""
    return _field(param, "type") is None and _field(param, "param_type") is None


def boolean_case_key(key: str) -> bool | None:
    """The boolean a SAIVerse-style case key matches (``"True"`` → True), else None."""
    return BOOLEAN_CASE_KEYS.get(key)


def lowercase_case_key(key: str) -> str:
    """The SEA spelling of a case key (``"True"`` → ``"true"``; others unchanged)."""
    value = boolean_case_key(key)
    return key if value is None else ("true" if value else "false")


def tool_mode_values(name: str | None, args: Mapping[str, Any] | None, text: str) -> dict[str, Any]:
    """The variables an ``llm`` node in tool mode sets, with SAIVerse's values: the chosen
    call's ``name`` and ``args`` (``None``: no tool chosen) and the answer's ``text``."""
    called = name is not None
    values: dict[str, Any] = {
        "tool_called": called,
        "has_speak_content": bool(text),
        "speak_content": text,
        "tool_name": name,
        "tool_args": dict(args or {}) if called else None,
    }
    for key, value in (args or {}).items() if called else ():
        values[f"{TOOL_ARG_PREFIX}{key}"] = value
    return values
