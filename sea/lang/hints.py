"""Hints for likely mistakes: close field names and known SAIVerse habits."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

KNOWN_MISTAKES: dict[tuple[str, str], str] = {
    ("*", "condition"): "branches are `conditional_next`: {field, operator, cases, default}",
    ("*", "conditions"): "branches are `conditional_next`: {field, operator, cases, default}",
    ("playbook", "version"): "playbooks are not versioned; remove it",
    ("playbook", "model"): (
        "models are chosen by the host: set `context_profile` (conversation, router, worker, "
        "worker_light) or `model_type` (normal, lightweight)"
    ),
    ("playbook", "max_iterations"): (
        "loops are bounded by a counter in a `set` node and a `conditional_next` on it; the "
        "engine also bounds every pulse's steps"
    ),
    ("playbook", "metadata"): "playbooks have no `metadata`; use `description`",
}
"""Mistakes on any node (``*``) and on the playbook; each node type declares its own
(:attr:`sea.lang.node.NodeModel.known_mistakes`)."""

TYPE_NAME_FIXES: dict[str, str] = {
    "int": "integer",
    "float": "number",
    "double": "number",
    "str": "string",
    "bool": "boolean",
    "dict": "object",
    "list": "array",
    "none": "null",
    "None": "null",
}
"""Python type names written where JSON Schema wants its own."""


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    """The closest valid name, if one is close enough."""
    found = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def suggest(name: str, choices: Iterable[str]) -> str:
    """``did you mean `x`? `` (ending in a space) when a choice is close to ``name``, else
    ``""``: the start of a hint that goes on to list the choices."""
    close = did_you_mean(name, choices)
    return f"did you mean `{close}`? " if close else ""


def unknown_field_hint(
    kind: str, name: str, valid: Iterable[str], mistakes: Mapping[str, str] | None = None
) -> str:
    """The hint for an unknown field ``name`` on an object of ``kind`` (node type or
    ``playbook``, ``input parameter``…); ``mistakes``: the node type's own known mistakes."""
    known = (
        (mistakes or {}).get(name)
        or KNOWN_MISTAKES.get((kind, name))
        or KNOWN_MISTAKES.get(("*", name))
    )
    if known:
        return known
    close = did_you_mean(name, valid)
    fields = ", ".join(f"`{v}`" for v in sorted(valid))
    if close:
        return f"did you mean `{close}`? Valid fields: {fields}"
    return f"valid fields: {fields}"
