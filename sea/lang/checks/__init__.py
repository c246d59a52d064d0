"""Static checks of a playbook, one module per family.

Each family is a function ``(playbook, context) -> list[Issue]``. They run once the document
has passed the schema; after schema errors, the checks whose findings would be unreliable
are skipped: with ``partial=True`` (nodes or edges were lost) the flow and variable checks,
with ``trimmed=True`` (a node lost a field, maybe a misspelt ``output_key``) the variable
checks. The loader also drops the findings about a node that lost fields, so that one typo
gives one diagnostic.
"""

from __future__ import annotations

from collections.abc import Callable

from sea.lang.checks import (
    calls,
    cases,
    expressions,
    graph,
    reports,
    reserved,
    schemas,
    tools,
    variables,
)
from sea.lang.checks.context import CheckContext, ToolCatalogue
from sea.lang.issues import Issue
from sea.lang.models import Playbook
from sea.lang.node import PlaybookIndex, Signature

Check = Callable[[Playbook, CheckContext], list[Issue]]

ALWAYS: tuple[Check, ...] = (
    graph.check_ids_and_targets,
    reserved.check_reserved,
    schemas.check_response_schemas,
    expressions.check_expressions,
    cases.check_cases,
    calls.check_calls,
    reports.check_reports,
    tools.check_tools,
)
"""Checks whose findings hold even when some nodes are stubs."""

FLOW: tuple[Check, ...] = (graph.check_flow,)
"""Checks that need every node and edge as written."""

DATA: tuple[Check, ...] = (variables.check_variables,)
"""Checks that need every field that may define a variable as written."""

__all__ = ["CheckContext", "PlaybookIndex", "Signature", "ToolCatalogue", "run_checks"]


def run_checks(
    playbook: Playbook, context: CheckContext, *, partial: bool = False, trimmed: bool = False
) -> list[Issue]:
    """Every static check's issues for this playbook (the reliable ones, after schema errors)."""
    checks = ALWAYS + (() if partial else FLOW) + (() if partial or trimmed else DATA)
    issues: list[Issue] = []
    for check in checks:
        issues.extend(check(playbook, context))
    return issues
