"""Arguments against what a callee declares: shared by playbook calls and tool calls."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sea.errors import Severity
from sea.lang.hints import suggest
from sea.lang.issues import Issue


@dataclass(frozen=True)
class Callee:
    """What a node calls, for the messages: ``` `summarize` ``` or ``tool `web_search` ``."""

    label: str
    noun: str
    """What the callee calls what it declares: ``parameter`` or ``argument``."""
    unknown_code: str
    missing_code: str


def argument_issues(
    callee: Callee,
    node_id: str,
    given: Mapping[str, str],
    declared: Sequence[str] | None,
    required: Iterable[str],
    *,
    missing_at: str,
    missing_severity: Severity = Severity.ERROR,
) -> list[Issue]:
    """An issue for every given argument the callee does not declare (when it declares
    any) and for every required one that is not given.

    Args:
        given: Argument name → pointer to where it is given.
        declared: The callee's declared names, in order (``None``: not known, not checked).
        missing_at: Pointer for a missing argument.
    """
    issues = [
        Issue(
            callee.unknown_code,
            f"{callee.label} has no {callee.noun} `{name}`",
            pointer,
            hint=suggest(name, declared) + f"{callee.noun}s: " + (", ".join(declared) or "none"),
            node_id=node_id,
            at_key=True,
        )
        for name, pointer in given.items()
        if declared is not None and name not in declared
    ]
    issues += [
        Issue(
            callee.missing_code,
            f"{callee.label} requires the argument `{name}`, which is not passed",
            missing_at,
            severity=missing_severity,
            hint=f'add "{name}": "{{…}}" to `args`',
            node_id=node_id,
        )
        for name in required
        if name not in given
    ]
    return issues
