"""The instruction an ``actions`` node's model reads: the task, then the real catalogue.

Only the offered tools appear (names, descriptions, parameters), so a plan can name no tool
that does not exist; then what ``action_id`` and ``ref:`` mean, and that a ref names only
an earlier action's id. Descriptions are cut to their first sentence: the whole text is in
the plan's schema, and a small model reads a long prompt slowly and copies its examples.
The catalogue is the tools' sources' text, not the engine's: its ``<system>`` tags are
neutralized (:mod:`sea.lang.trust`), as the task's substituted values are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sea.engine.actions.catalogue import ToolSpec
from sea.engine.tools.arguments import accepted_types
from sea.jsontypes import json_text
from sea.lang.trust import neutralize

_RULES = """\
Answer with a JSON object {{"actions": [...], "reason": "..."}}. Each action is
{{"action_id": "<a short unique name>", "tool": "<one of the tools above>", "parameters": {{...}}}}.
The actions run in order. Rules:
- Use only the tools listed above, with their parameters.
- Give every action its own action_id (letters, digits and _), e.g. read_doc.
- A parameter may be "ref:<action_id>" to receive the result of an earlier action; it is
  converted to what the parameter needs (a file's text for a text parameter, a list for a
  list parameter). Example: {{"action_id": "read_doc", "tool": "...", ...}} then a later
  parameter "ref:read_doc".
- A ref names only the action_id of an EARLIER action: never a later one, never its own,
  never any other text.
- Plan at most {max_actions} action{s} (none, "actions": [], only when no tool helps)."""


def actions_prompt(task: str, catalogue: Sequence[ToolSpec], max_actions: int) -> str:
    """The whole instruction: the tools, the rules of a plan, then ``task`` (last, where a
    small model attends most)."""
    tools = []
    for spec in catalogue:
        tools.append(f"- {spec.name}: {first_sentence(spec.description) or '(no description)'}")
        tools.extend(_parameter_lines(spec.parameters))
    # names, descriptions and parameters come from the tools' sources (an MCP server, say)
    lines = ["Tools you may use (no others exist):"]
    if tools:
        lines.append(neutralize("\n".join(tools)))
    lines.append("")
    lines.append(_RULES.format(max_actions=max_actions, s="" if max_actions == 1 else "s"))
    lines.extend(["", "The task:", task.strip()])
    return "\n".join(lines)


def _parameter_lines(schema: Mapping[str, Any]) -> list[str]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    if not properties:
        return ["    parameters: none"]
    required = set(schema.get("required") or ())
    lines = []
    for name, prop in properties.items():
        prop = prop if isinstance(prop, Mapping) else {}
        types = sorted(accepted_types(prop, schema) - {"null"}) or ["any"]
        notes = [" or ".join(types), "required" if name in required else "optional"]
        if "default" in prop:
            notes.append(f"default {json_text(prop['default'])}")
        if isinstance(prop.get("enum"), list):
            notes.append("one of " + ", ".join(json_text(v) for v in prop["enum"]))
        description = first_sentence(str(prop.get("description") or ""))
        text = f"    {name} ({', '.join(notes)})"
        lines.append(f"{text}: {description}" if description else text)
    return lines


_SENTENCE_END = re.compile(r"(?<![ei]\.[gi]\.)(?<=[.!?])\s|\n")
_MAX_SENTENCE = 200


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (at most 200 characters, cut with ``…``)."""
    head = _SENTENCE_END.split(text.strip(), maxsplit=1)[0].strip()
    return head if len(head) <= _MAX_SENTENCE else head[: _MAX_SENTENCE - 1] + "…"
