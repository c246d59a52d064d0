"""What a node names or holds that the static checks look at, as its type declares it
(:class:`~sea.lang.node.NodeModel`): the schema of a structured answer, the tools and
playbooks it names with the arguments it passes them, a playbook it chooses at run time,
the memory tags it writes and the expressions it evaluates. A check asks the node for
these instead of testing its type, so a host's own node type is checked as a built-in one
is by declaring them.

Every location is a path inside the node (``("available_tools", 0)``), for the check to
join to the node's JSON pointer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FieldPath = tuple[str | int, ...]
"""Where a value is written inside a node: its field, then keys or indexes inside it."""


@dataclass(frozen=True)
class Answer:
    """A structured answer a node asks a model for and stores.

    Attributes:
        schema: The answer's JSON Schema (checked against the metaschema, and must be
            runnable: RE2 patterns, ``$ref`` inside it).
        schema_field: The node's field that holds the schema.
        key: The state key that receives the whole answer (None: none).
        copies: Path in the answer → the state key it is copied to (``output_mapping``);
            a path may start with ``key.``.
        copies_field: The node's field that holds ``copies``.
    """

    schema: dict[str, Any]
    schema_field: str = "response_schema"
    key: str | None = None
    copies: Mapping[str, str] = field(default_factory=dict)
    copies_field: str = "output_mapping"

    def path(self, source: str) -> list[str]:
        """The segments of a copied path inside the answer (a leading ``key.`` dropped)."""
        prefix = f"{self.key}." if self.key else None
        if prefix and source.startswith(prefix):
            source = source[len(prefix):]
        return source.split(".")


@dataclass(frozen=True)
class ToolUse:
    """A tool a node names.

    Attributes:
        tool: The tool's name.
        at: Where the name is written.
        arguments: Field → the arguments it passes (``args``, legacy ``args_input``); None
            when the node does not pass arguments (a model chooses them).
        literal_fields: The fields of ``arguments`` whose values are the arguments
            themselves (checked against the tool's schema unless a template); the other
            fields name where the values come from.
        missing_at: Where a missing argument is reported (empty: where the name is).
    """

    tool: str
    at: FieldPath
    arguments: Mapping[str, Mapping[str, Any] | None] | None = None
    literal_fields: frozenset[str] = frozenset()
    missing_at: FieldPath = ()


@dataclass(frozen=True)
class CalleeUse:
    """A playbook a node names.

    Attributes:
        playbook: The playbook's name.
        at: Where the name is written.
        arguments: The arguments passed to it (None: the node gives none), checked against
            its parameters when ``checked``.
        arguments_field: The node's field that holds ``arguments``.
        checked: Whether ``arguments`` are all it gets (else more come at run time and
            only the callee's existence is checked).
    """

    playbook: str
    at: FieldPath
    arguments: Mapping[str, Any] | None = None
    arguments_field: str = "args"
    checked: bool = False


@dataclass(frozen=True)
class ChosenCallee:
    """A node calls a playbook chosen at run time (``exec``: its name read from the state).

    Attributes:
        allowed: The playbooks it may call; None: any playbook the pulse offers a router.
    """

    allowed: tuple[str, ...] | None = None


@dataclass(frozen=True)
class TagUse:
    """A memory tag a node writes, and where."""

    tag: str
    at: FieldPath


@dataclass(frozen=True)
class ExpressionUse:
    """An expression a node evaluates (its source without the leading ``=``), and where."""

    source: str
    at: FieldPath
