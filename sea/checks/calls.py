"""Calls between playbooks: the callee exists and gets the arguments it declares."""

from __future__ import annotations

from sea import codes
from sea.checks.context import CheckContext, PlaybookIndex
from sea.checks.nodes import indexed, node_pointer
from sea.hints import did_you_mean
from sea.issues import Issue, error, warning
from sea.locate import escape_pointer
from sea.models import ExecNode, Playbook, SubplayNode


def _unknown(name: str, pointer: str, node_id: str, library: PlaybookIndex) -> Issue:
    close = did_you_mean(name, library.names())
    return error(
        codes.UNKNOWN_PLAYBOOK,
        f"playbook `{name}` does not exist",
        pointer,
        node_id=node_id,
        hint=(f"did you mean `{close}`? " if close else "")
        + "playbooks are looked up by `name` in the playbook directories",
    )


def _arguments(index: int, node: SubplayNode, library: PlaybookIndex) -> list[Issue]:
    signature = library.signature(node.playbook)
    if signature is None:
        return [_unknown(node.playbook, node_pointer(index, "playbook"), node.id, library)]
    issues: list[Issue] = []
    args = node.args or {}
    for name in args:
        if name not in signature.params:
            close = did_you_mean(name, signature.params)
            issues.append(
                error(
                    codes.UNKNOWN_ARGUMENT,
                    f"`{node.playbook}` has no parameter `{name}`",
                    node_pointer(index, "args", escape_pointer(name)),
                    node_id=node.id,
                    at_key=True,
                    hint=(f"did you mean `{close}`? " if close else "")
                    + "parameters: "
                    + (", ".join(signature.params) or "none"),
                )
            )
    for name, required in signature.params.items():
        if required and name not in args:
            make = error if node.args is not None else warning
            issues.append(
                make(
                    codes.MISSING_ARGUMENT,
                    f"`{node.playbook}` requires the argument `{name}`, which is not passed",
                    node_pointer(index, "args" if node.args is not None else "playbook"),
                    node_id=node.id,
                    hint=f'add "{name}": "{{…}}" to `args`',
                )
            )
    return issues


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
