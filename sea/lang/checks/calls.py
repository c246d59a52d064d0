"""Calls between playbooks: the callee exists and gets the arguments it declares.

The arguments a callee receives implicitly (``input``, :data:`sea.lang.saiverse.
IMPLICIT_ARGUMENTS`) are never missing; they and ``metadata`` (a run variable passed on to
every callee) may be passed whether the callee declares them or not.
"""

from __future__ import annotations

from sea.errors import Severity
from sea.lang import codes, saiverse
from sea.lang.checks.arguments import Callee, argument_issues
from sea.lang.checks.context import CheckContext
from sea.lang.checks.nodes import indexed, node_pointer
from sea.lang.hints import suggest
from sea.lang.issues import Issue, error
from sea.lang.locate import escape_pointer
from sea.lang.models import Playbook
from sea.lang.node import PlaybookIndex
from sea.lang.node_models import ExecNode, SubplayNode
from sea.lang.variables import SAIVERSE_RUN_VARIABLES


def _unknown(name: str, pointer: str, node_id: str, library: PlaybookIndex) -> Issue:
    return error(
        codes.UNKNOWN_PLAYBOOK,
        f"playbook `{name}` does not exist",
        pointer,
        node_id=node_id,
        hint=suggest(name, library.names())
        + "playbooks are looked up by `name` in the playbook directories",
    )


def _arguments(index: int, node: SubplayNode, library: PlaybookIndex) -> list[Issue]:
    signature = library.signature(node.playbook)
    if signature is None:
        return [_unknown(node.playbook, node_pointer(index, "playbook"), node.id, library)]
    implicit = {rule.name for rule in saiverse.implicit_arguments(node.node_type())}
    passed_on = implicit | SAIVERSE_RUN_VARIABLES  # accepted, declared or not
    args = {name: value for name, value in (node.args or {}).items() if name not in passed_on}
    given = {name for name in (node.args or {}) if name in passed_on}  # passed: not missing
    callee = Callee(
        f"`{node.playbook}`", "parameter", codes.UNKNOWN_ARGUMENT, codes.MISSING_ARGUMENT
    )
    return argument_issues(
        callee,
        node.id,
        {name: node_pointer(index, "args", escape_pointer(name)) for name in args},
        list(signature.params),
        [
            name
            for name, required in signature.params.items()
            if required and name not in implicit and name not in given
        ],
        missing_at=node_pointer(index, "args" if node.args is not None else "playbook"),
        missing_severity=Severity.ERROR if node.args is not None else Severity.WARNING,
    )


def check_calls(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """Subplay targets and exec allow-lists exist (when a library is given); arguments fit."""
    library = context.library
    if library is None:
        return []
    issues: list[Issue] = []
    for index, node in indexed(playbook):
        if isinstance(node, SubplayNode):
            issues.extend(_arguments(index, node, library))
        elif isinstance(node, ExecNode):
            for i, name in enumerate(node.allowed_playbooks or []):
                if library.signature(name) is None:
                    pointer = node_pointer(index, "allowed_playbooks", i)
                    issues.append(_unknown(name, pointer, node.id, library))
    return issues
