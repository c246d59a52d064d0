"""Static checks of a playbook (SPEC §2.2), one module per family.

Each family is a function ``(playbook, context) -> list[Issue]``. They run once the document
has passed the schema; with ``partial=True`` (some nodes were stubbed after schema errors)
the checks whose findings would be unreliable are skipped.
"""

from __future__ import annotations

from collections.abc import Callable

from sea.checks import calls, cases, expressions, graph, reserved, schemas, tools, variables
from sea.checks.context import CheckContext, PlaybookIndex, Signature, ToolCatalogue
from sea.issues import Issue
from sea.models import Playbook

Check = Callable[[Playbook, CheckContext], list[Issue]]

ALWAYS: tuple[Check, ...] = (
    graph.check_ids_and_targets,
    reserved.check_reserved,
    schemas.check_response_schemas,
    expressions.check_expressions,
    cases.check_cases,
    calls.check_calls,
    tools.check_tools,
)
"""Checks whose findings hold even when some nodes are stubs."""

WHOLE: tuple[Check, ...] = (graph.check_flow, variables.check_variables)
"""Checks that need every node as written."""

__all__ = ["CheckContext", "PlaybookIndex", "Signature", "ToolCatalogue", "run_checks"]


def run_checks(playbook: Playbook, context: CheckContext, *, partial: bool = False) -> list[Issue]:
    """Every static check's issues for this playbook."""
    issues: list[Issue] = []
    for check in ALWAYS + (() if partial else WHOLE):
        issues.extend(check(playbook, context))
    return issues
