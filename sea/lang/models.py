"""Typed models of the playbook document (the SAIVerse format, made strict).

These pydantic models are the single source of truth for the document's shape:
``schemas/playbook.schema.json`` is generated from them. Every model forbids unknown
fields, and every field carries a human description (it becomes the schema's
``description`` and the editor's tooltip).

The node models live in :mod:`sea.lang.node_models` (the built-in types) and
:mod:`sea.lang.node` (what every node type is).
"""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from collections.abc import Callable
from typing import Annotated, Any, Self

from pydantic import Field, StringConstraints, model_validator

from sea.jsontypes import json_type
from sea.lang.node import NAME_PATTERN, StrictModel, empty_list
from sea.lang.node_models import Node, ParamType

REPORT_KEY = "report_to_parent"
"""The variable a called playbook's report reaches its caller in (``report_template``)."""

_TYPE_CHECKS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "string": ("a string", lambda v: isinstance(v, str)),
    "number": (
        "a number",
        lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    ),
    "integer": (
        "an integer",
        lambda v: isinstance(v, int) and not isinstance(v, bool)
        or isinstance(v, float) and v.is_integer(),
    ),
    "boolean": ("a boolean", lambda v: isinstance(v, bool)),
    "object": ("an object", lambda v: isinstance(v, dict)),
    "array": ("an array", lambda v: isinstance(v, list)),
}


class InputParam(StrictModel):
    """One parameter of the playbook's signature."""

    name: str = Field(description="Parameter name; the value is available as `{name}`.")
    description: str = Field(default="", description="What the parameter means.")
    type: ParamType | None = Field(
        default=None, description="Expected JSON type of the value (default `string`)."
    )
    param_type: ParamType | None = Field(default=None, description="Legacy spelling of `type`.")
    required: bool = Field(
        default=False,
        description="The caller must pass it (unless a `default` is given). Absent: the "
        "parameter is optional, as in SAIVerse, and an argument not passed is null.",
    )
    default: Any = Field(default=None, description="Value used when the caller passes none.")
    source: str | None = Field(
        default=None,
        pattern=r"^(input|parent\.[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*)$",
        description="Legacy (SAIVerse): where the value comes from when the caller passes "
        "none: `input` (the callee's input) or `parent.X` (the caller's variable `X`). "
        "`sea migrate` writes it into the callers' `args`.",
    )
    enum_values: list[Any] | None = Field(default=None, description="Allowed values (for `enum`).")
    enum_source: str | None = Field(
        default=None, description="Host hint for a UI: where enum values come from."
    )
    user_configurable: bool = Field(default=False, description="Host hint for a UI.")
    ui_widget: str | None = Field(default=None, description="Host hint for a UI.")

    @model_validator(mode="after")
    def _one_type_spelling(self) -> Self:
        if self.type is not None and self.param_type is not None and self.type != self.param_type:
            raise ValueError(
                f"`type` ({self.type}) and its legacy spelling `param_type` ({self.param_type}) "
                "disagree; keep only `type`"
            )
        return self

    @model_validator(mode="after")
    def _default_fits_type(self) -> Self:
        problem = None if self.default is None else self.problem_with(self.default)
        if problem:
            raise ValueError(
                f"the default of parameter {self.name!r} {problem}; "
                f"give a default of the declared type ({self.kind}) or change the type"
            )
        return self

    @property
    def kind(self) -> ParamType:
        """The parameter's type, whichever spelling gave it."""
        return self.type or self.param_type or "string"

    def problem_with(self, value: Any) -> str | None:
        """What is wrong with ``value`` for this parameter (``None`` if it fits)."""
        if self.kind == "enum":
            allowed = self.enum_values or []
            if allowed and value not in allowed:
                return f"must be one of {allowed!r}, got {value!r}"
            return None
        expected, test = _TYPE_CHECKS[self.kind]
        if not test(value):
            return f"must be {expected}, got {json_type(value)} {value!r}"[:200]
        return None


class ContextRequirements(StrictModel):
    """Legacy playbook-level context settings (accepted; use `context_profile` on llm nodes)."""

    history_depth: str | int = Field(default="full", description="Legacy, no effect.")
    history_balanced: bool = Field(default=False, description="Legacy, no effect.")
    include_internal: bool = Field(default=False, description="Legacy, no effect.")
    inventory: bool = Field(default=True, description="Legacy, no effect.")
    building_items: bool = Field(default=True, description="Legacy, no effect.")
    system_prompt: bool = Field(default=True, description="Legacy, no effect.")
    available_playbooks: bool = Field(default=False, description="Legacy, no effect.")
    visual_context: bool = Field(default=False, description="Legacy, no effect.")
    memory_weave: bool = Field(default=False, description="Legacy, no effect.")
    working_memory: bool = Field(default=False, description="Legacy, no effect.")
    realtime_context: bool = Field(default=True, description="Legacy, no effect.")


class Playbook(StrictModel):
    """A playbook: a named graph of steps with a signature."""

    schema_: str | None = Field(
        default=None,
        alias="$schema",
        description="URI or path of the playbook JSON Schema, for editors.",
    )
    name: str = Field(
        pattern=NAME_PATTERN, description="Unique name: lowercase letters, digits and `_`."
    )
    description: str = Field(description="What the playbook does (shown to routers).")
    examples: list[Annotated[str, StringConstraints(min_length=1, max_length=300)]] = Field(
        default_factory=empty_list,
        max_length=100,
        description="Requests this playbook should handle, written as people phrase them "
        '(e.g. `"do you remember my dog\'s name?"`), in any language: a router\'s lexical '
        "prior (`rank_playbooks`) compares the user's message with them. Only for a "
        "`router_callable` playbook.",
    )
    display_name: str | None = Field(default=None, description="Label for people.")
    input_schema: list[InputParam] = Field(
        default_factory=empty_list, description="The playbook's parameters."
    )
    output_schema: list[str] | None = Field(
        default=None,
        description="State keys copied back into the caller's state when the playbook ends.",
    )
    start_node: str = Field(description="Id of the first node.")
    nodes: list[Node] = Field(min_length=1, description="The steps.")
    report_template: str | None = Field(
        default=None,
        description="A report for the caller, rendered from this playbook's final state when "
        "it ends (no model call) and given to the caller as `report_to_parent`, e.g. "
        '`"Drew {image.title}: {image.url}"`.',
    )
    can_run_as_child: bool = Field(
        default=False,
        description="Written to be called by another playbook and report to it: it must have "
        "a `report_template` or a node whose response schema has a `report_to_parent` "
        "property (checked, SEA053).",
    )
    router_callable: bool = Field(
        default=False, description="A router (and `exec`) may choose this playbook."
    )
    user_selectable: bool = Field(
        default=False, description="A host may offer it as a top-level playbook."
    )
    dev_only: bool = Field(default=False, description="Host hint: hide unless developing.")
    required_credentials: list[str] | None = Field(
        default=None, description="Host hint: credentials the playbook's tools need."
    )
    context_requirements: ContextRequirements | None = Field(
        default=None, description="Legacy playbook-level context settings (no effect)."
    )
    version: str | int | float | None = Field(
        default=None,
        description="Legacy, no effect: SAIVerse writes one (`sea migrate` removes it).",
    )

    def tools_needed(self) -> frozenset[str]:
        """The tools its nodes cannot run without (``tool`` nodes' tools, the tools ``llm``
        and ``actions`` nodes offer)."""
        return frozenset(name for node in self.nodes for name in node.tools_needed())

    def node(self, node_id: str) -> Node:
        """The node with this id (``KeyError`` if none)."""
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)

    @model_validator(mode="after")
    def _examples_for_routers(self) -> Self:
        if self.examples and not self.router_callable:
            raise ValueError(
                "`examples` are read only by a router: set `router_callable: true` or "
                "remove them"
            )
        return self
