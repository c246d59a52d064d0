"""``=`` expressions in ``set`` nodes must parse."""

from __future__ import annotations

from sea.lang import codes
from sea.lang.checks.context import CheckContext
from sea.lang.checks.nodes import indexed, node_pointer
from sea.lang.expressions import ExpressionSyntaxError, compile_expression
from sea.lang.issues import Issue, error
from sea.lang.models import Playbook
from sea.lang.node_models import SetNode


def check_expressions(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """A located error for every expression that does not parse."""
    issues: list[Issue] = []
    for index, node in indexed(playbook):
        if not isinstance(node, SetNode):
            continue
        for key, value in node.assignments.items():
            if not (isinstance(value, str) and value.startswith("=")):
                continue
            try:
                compile_expression(value[1:])
            except ExpressionSyntaxError as exc:
                issues.append(
                    error(
                        codes.EXPRESSION_SYNTAX,
                        exc.message,
                        node_pointer(index, "assignments", key),
                        node_id=node.id,
                        char_offset=exc.offset + 1,
                        hint="expressions are CEL: arithmetic, comparisons, && || !, "
                        "`cond ? a : b`, size(), int(), double(), string(); "
                        "`{a.b}` reads a variable",
                    )
                )
    return issues
