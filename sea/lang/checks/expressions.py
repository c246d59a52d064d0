"""``=`` expressions (a ``set`` node's, or any node's that declares them,
:meth:`~sea.lang.node.NodeModel.expressions`) must parse, within the language's size
limits."""

from __future__ import annotations

from sea.lang import codes
from sea.lang.checks.context import CheckContext
from sea.lang.checks.nodes import indexed, node_pointer
from sea.lang.expressions import (
    MAX_EXPRESSION_DEPTH,
    MAX_EXPRESSION_LENGTH,
    ExpressionSyntaxError,
    ExpressionTooLarge,
    compile_expression,
)
from sea.lang.issues import Issue, error
from sea.lang.models import Playbook

_SYNTAX_HINT = (
    "expressions are CEL: arithmetic, comparisons, && || !, `cond ? a : b`, size(), int(), "
    "double(), string(); `{a.b}` reads a variable"
)
_SIZE_HINT = (
    f"an expression has at most {MAX_EXPRESSION_LENGTH:,} characters and "
    f"{MAX_EXPRESSION_DEPTH} levels of nesting; split it into several `set` assignments "
    "(later ones see earlier ones)"
)


def check_expressions(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """A located error for every expression that does not parse."""
    issues: list[Issue] = []
    for index, node in indexed(playbook):
        for use in node.expressions():
            try:
                compile_expression(use.source)
            except ExpressionSyntaxError as exc:
                large = isinstance(exc, ExpressionTooLarge)
                issues.append(
                    error(
                        codes.EXPRESSION_TOO_LARGE if large else codes.EXPRESSION_SYNTAX,
                        exc.message,
                        node_pointer(index, *use.at),
                        node_id=node.id,
                        char_offset=exc.offset + 1,
                        hint=_SIZE_HINT if large else _SYNTAX_HINT,
                    )
                )
    return issues
