"""Hints for likely mistakes: close field names and known SAIVerse habits."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

_PROMPT = (
    "the prompt of an llm node is `action` (a template); the system prompt comes from the persona"
)
_MODEL = (
    "models are chosen by the host: set `context_profile` (conversation, router, worker, "
    "worker_light) or `model_type` (normal, lightweight)"
)
_TEXT = "the text template of this node is `action`"

KNOWN_MISTAKES: dict[tuple[str, str], str] = {
    ("llm", "tools"): "did you mean `available_tools`? (SAIVerse silently dropped `tools`)",
    ("llm", "prompt_template"): _PROMPT,
    ("llm", "prompt"): _PROMPT,
    ("llm", "system_prompt"): _PROMPT,
    ("llm", "model"): _MODEL,
    ("llm", "temperature"): "sampling settings belong to the host's model configuration",
    ("exec", "action"): (
        "exec takes the playbook name from the state key in `playbook_source`; to call a fixed "
        "playbook use a `subplay` node with `playbook`"
    ),
    ("tool", "tool"): "the tool name is `action`",
    ("tool", "name"): "the tool name is `action`",
    ("tool", "tool_name"): "the tool name is `action`",
    ("tool", "arguments"): "did you mean `args`?",
    ("tool", "params"): "did you mean `args`?",
    ("subplay", "name"): "the callee is `playbook`",
    ("subplay", "playbook_name"): "the callee is `playbook`",
    ("memorize", "content"): _TEXT,
    ("memorize", "text"): _TEXT,
    ("speak", "text"): _TEXT,
    ("say", "text"): _TEXT,
    ("think", "text"): _TEXT,
    ("*", "condition"): "branches are `conditional_next`: {field, operator, cases, default}",
    ("*", "conditions"): "branches are `conditional_next`: {field, operator, cases, default}",
    ("playbook", "version"): "playbooks are not versioned; remove it",
    ("playbook", "model"): _MODEL,
    ("playbook", "max_iterations"): (
        "loops are bounded by a counter in a `set` node and a `conditional_next` on it; the "
        "engine also bounds every pulse's steps"
    ),
    ("playbook", "metadata"): "playbooks have no `metadata`; use `description`",
}

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


def unknown_field_hint(kind: str, name: str, valid: Iterable[str]) -> str:
    """The hint for an unknown field ``name`` on an object of ``kind`` (node type or
    ``playbook``, ``input parameter``…)."""
    known = KNOWN_MISTAKES.get((kind, name)) or KNOWN_MISTAKES.get(("*", name))
    if known:
        return known
    close = did_you_mean(name, valid)
    fields = ", ".join(f"`{v}`" for v in sorted(valid))
    if close:
        return f"did you mean `{close}`? Valid fields: {fields}"
    return f"valid fields: {fields}"
