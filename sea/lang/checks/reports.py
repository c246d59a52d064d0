"""Reports to a caller: a playbook that says it can run as a child has one.

A playbook with ``"can_run_as_child": true`` is written to be called by another and to tell
it what it did, in ``report_to_parent``: from its ``report_template`` (rendered from its final
state when it ends) or from a model's structured answer with a ``report_to_parent`` property.
Without either it is an error (SAIVerse's design made this a load-time failure; its runtime
only logged a warning).
"""

from __future__ import annotations

from typing import Any

from sea.lang import codes
from sea.lang.checks.context import CheckContext
from sea.lang.issues import Issue, error
from sea.lang.models import REPORT_KEY, Playbook


def _has_report_property(schema: Any) -> bool:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return isinstance(properties, dict) and REPORT_KEY in properties


def reports(playbook: Playbook) -> bool:
    """Whether the playbook gives its caller a ``report_to_parent``."""
    if playbook.report_template is not None:
        return True
    for node in playbook.nodes:
        answer = node.answer()
        if answer is not None and _has_report_property(answer.schema):
            return True
    return False


def check_reports(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """An error when a playbook that can run as a child has no report for its caller."""
    if not playbook.can_run_as_child or reports(playbook):
        return []
    return [
        error(
            codes.CHILD_WITHOUT_REPORT,
            f"playbook `{playbook.name}` can run as a child but gives its caller no "
            f"`{REPORT_KEY}`",
            "/can_run_as_child",
            hint='add a `report_template` (e.g. "Done: {result}"), or a `report_to_parent` '
            "property to an llm node's `response_schema`",
        )
    ]
