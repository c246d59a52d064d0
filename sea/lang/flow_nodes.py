"""The node types that only touch the run's state: ``set`` (assign variables) and ``pass``
(a branching point)."""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from collections.abc import Iterator
from typing import Any, ClassVar, Literal

from pydantic import Field

from sea.lang.expressions import ExpressionSyntaxError, compile_expression
from sea.lang.locate import escape_pointer
from sea.lang.node import (
    Defined,
    NodeModel,
    PlaybookIndex,
    Read,
    Unknown,
    keys_defined,
    nested_reads,
)
from sea.lang.uses import ExpressionUse


class SetNode(NodeModel):
    """Assign state variables, in order."""

    type: Literal["set"] = Field(description="Node type: assign variables.")
    assignments: dict[str, Any] = Field(
        description="Variable → value, applied in order (later ones see earlier ones). "
        "Strings are templates; a string starting with `=` is an expression, e.g. "
        "`=count + 1`. Other JSON values are stored as they are."
    )

    def field_reads(self, base: str) -> Iterator[Read]:
        """The variables of each assignment: an expression's names, a template's references."""
        for key, value in self.assignments.items():
            pointer = f"{base}/assignments/{escape_pointer(key)}"
            if isinstance(value, str) and value.startswith("="):
                try:
                    expression = compile_expression(value[1:])
                except ExpressionSyntaxError:
                    continue
                for name in sorted(expression.variables):
                    found = value.find("{" + name)
                    yield Read(name, pointer, self.id, found if found >= 0 else None, False, name)
            else:
                yield from nested_reads(value, pointer, self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """Every assigned variable."""
        return keys_defined(self.id, *self.assignments)

    def expressions(self) -> Iterator[ExpressionUse]:
        """Every assignment whose value starts with ``=``."""
        for key, value in self.assignments.items():
            if isinstance(value, str) and value.startswith("="):
                yield ExpressionUse(value[1:], ("assignments", key))


class PassNode(NodeModel):
    """Do nothing; used to branch."""

    type: Literal["pass"] = Field(description="Node type: do nothing (a branching point).")

    mermaid_shape: ClassVar[tuple[str, str]] = ("{", "}")
