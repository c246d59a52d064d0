"""What speak, say, think and memorize share: the text a node emits or stores."""

from __future__ import annotations

from typing import Any

from sea.engine.pulse import Frame, as_text
from sea.engine.state import PlaybookState, variables
from sea.errors import NodeFailed
from sea.lang.templates import render
from sea.lang.trust import neutralize


def node_text(action: str | None, state: PlaybookState) -> str:
    """The rendered ``action`` (``{last}`` when absent) as text; structures as JSON.

    Substituted values have their ``<system>`` tags neutralized: only the template's own
    text may carry the trust marker (:mod:`sea.lang.trust`).
    """
    template = action if action is not None else "{last}"
    return as_text(render(template, variables(state), escape=neutralize))


def node_metadata(
    frame: Frame, node: str, key: str | None, state: PlaybookState
) -> dict[str, Any]:
    """The object at ``state[key]`` for a message's metadata (``{}`` when no key is given)."""
    if key is None:
        return {}
    value = variables(state).get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise NodeFailed(
            f"metadata_key {key!r} must name an object, got {type(value).__name__}",
            playbook=frame.name,
            node=node,
        )
    return dict(value)
