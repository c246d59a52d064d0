"""Names the engine keeps for itself: graph node ids and provenance tags."""

from __future__ import annotations

from saimemory.tags import PROVENANCE_PREFIXES
from sea.lang import codes
from sea.lang.checks.context import CheckContext
from sea.lang.checks.nodes import indexed, node_pointer
from sea.lang.issues import Issue, error
from sea.lang.models import Playbook

RESERVED_IDS = frozenset({"__start__", "__end__"})
"""Node ids LangGraph uses for the graph's own start and end."""


def check_reserved(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """Node ids the graph reserves and tags the store reserves."""
    issues: list[Issue] = []
    for index, node in indexed(playbook):
        if node.id in RESERVED_IDS:
            issues.append(error(
                codes.RESERVED_ID,
                f"node id `{node.id}` is reserved for the graph's own start and end",
                node_pointer(index, "id"),
                node_id=node.id,
                hint="rename the node (and the edges that name it)",
            ))
        for use in node.tags_written():
            if use.tag.startswith(PROVENANCE_PREFIXES):
                issues.append(error(
                    codes.RESERVED_TAG,
                    f"tag `{use.tag}` is written by the store itself; a playbook cannot set it",
                    node_pointer(index, *use.at),
                    node_id=node.id,
                    hint="every write already carries `pulse:<id>`, `playbook:<name>` and "
                    "`node:<id>`; choose another tag",
                ))
    return issues
