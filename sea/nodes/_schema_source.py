"""An ``llm`` node's ``response_schema_source`` (SAIVerse): the answer's JSON Schema taken,
when the pulse runs, from a registered tool's arguments (``tool:NAME``, SAIVerse's
``spell:NAME``) or from a variable (``state:KEY``), the field rendered as a template first.
A node that gives ``response_schema`` keeps it (the checks warn, SEA064)."""

from __future__ import annotations

from typing import Any

from sea.engine.pulse import Frame, as_text
from sea.engine.state import PlaybookState, variables
from sea.errors import NodeFailed
from sea.lang.node_models import LLMNode
from sea.lang.templates import MISSING, render, resolve_path


def answer_schema(node: LLMNode, state: PlaybookState, frame: Frame) -> dict[str, Any] | None:
    """The JSON Schema of the node's answer: ``response_schema``, else the one its
    ``response_schema_source`` names, else none.

    Raises:
        NodeFailed: the source names no variable holding a JSON object.
        ToolNotFound: the source names a tool the pulse does not have.
    """
    if node.response_schema is not None or node.response_schema_source is None:
        return node.response_schema
    values = variables(state)
    source = as_text(render(node.response_schema_source, values, missing="keep")).strip()
    kind, _, name = source.partition(":")
    name = name.strip()
    if kind in ("tool", "spell") and name:
        return dict(frame.pulse.toolbox.schema(name))
    found = resolve_path(values, name) if kind == "state" and name else MISSING
    if isinstance(found, dict):
        return found
    shown = "nothing" if found is MISSING else f"a {type(found).__name__}"
    raise NodeFailed(
        f"response_schema_source {source!r} gives {shown}, not a JSON Schema object "
        "(`tool:NAME` or `state:KEY` with an object)",
        playbook=frame.name,
        node=node.id,
    )
