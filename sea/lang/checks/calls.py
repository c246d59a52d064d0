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
from sea.lang.node import NodeModel, PlaybookIndex
from sea.lang.uses import CalleeUse
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


def _arguments(
    index: int, node: NodeModel, use: CalleeUse, library: PlaybookIndex
) -> list[Issue]:
    signature = library.signature(use.playbook)
    if signature is None:
        return [_unknown(use.playbook, node_pointer(index, *use.at), node.id, library)]
    implicit = {rule.name for rule in saiverse.implicit_arguments(node.node_type())}
    passed_on = implicit | SAIVERSE_RUN_VARIABLES  # accepted, declared or not
    given_args = use.arguments or {}
    args = {name: value for name, value in given_args.items() if name not in passed_on}
    given = {name for name in given_args if name in passed_on}  # passed: not missing
    callee = Callee(
        f"`{use.playbook}`", "parameter", codes.UNKNOWN_ARGUMENT, codes.MISSING_ARGUMENT
    )
    field = use.arguments_field
    return argument_issues(
        callee,
        node.id,
        {name: node_pointer(index, field, escape_pointer(name)) for name in args},
        list(signature.params),
        [
            name
            for name, required in signature.params.items()
            if required and name not in implicit and name not in given
        ],
        missing_at=node_pointer(index, field) if use.arguments is not None
        else node_pointer(index, *use.at),
        missing_severity=Severity.ERROR if use.arguments is not None else Severity.WARNING,
    )


def check_calls(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """The playbooks a node names (a subplay's target, an exec's allow-list,
    :meth:`~sea.lang.node.NodeModel.callees_named`) exist, when a library is given; the
    arguments of a call that gets only those fit its parameters."""
    library = context.library
    if library is None:
        return []
    issues: list[Issue] = []
    for index, node in indexed(playbook):
        for use in node.callees_named():
            if use.checked:
                issues.extend(_arguments(index, node, use, library))
            elif library.signature(use.playbook) is None:
                pointer = node_pointer(index, *use.at)
                issues.append(_unknown(use.playbook, pointer, node.id, library))
    return issues
