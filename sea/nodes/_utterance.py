"""What speak, say, think and memorize share: the text a node emits or stores, and the
metadata object it attaches."""

from __future__ import annotations

from typing import Any

from saimemory.records import ENGINE_MEMO
from sea.engine.pulse import Frame, as_text
from sea.engine.state import PlaybookState, variables
from sea.errors import NodeFailed, SizeLimitExceeded
from sea.jsontypes import json_size
from sea.lang.templates import render
from sea.lang.trust import neutralize_outside

RESERVED_METADATA_KEYS = frozenset({ENGINE_MEMO})
"""Metadata keys only the engine sets (``engine_memo`` marks the messages the engine wrote,
the only ones that may speak with ``<system>``)."""
RESERVED_METADATA_PREFIX = "sea_"
"""The engine's namespace: a metadata key starting with it is the engine's too."""


def node_text(action: str | None, state: PlaybookState) -> str:
    """The rendered ``action`` (``{last}`` when absent) as text; structures as JSON.

    Substituted values have their ``<system>`` tags neutralized: only the template's own
    text may carry the trust marker (:mod:`sea.lang.trust`).
    """
    template = action if action is not None else "{last}"
    return as_text(render(template, variables(state), guard=neutralize_outside))


def node_metadata(
    frame: Frame, node: str, key: str | None, state: PlaybookState
) -> dict[str, Any]:
    """The object at ``state[key]`` for a message's metadata (``{}`` when no key is given
    or the key holds nothing).

    The object is data from a playbook or its caller (media attachments, say): it is
    stored and sent as it is, but it may not set a key of the engine's own
    (:data:`RESERVED_METADATA_KEYS`, or one starting with :data:`RESERVED_METADATA_PREFIX`)
    and its JSON may not be longer than ``Limits.max_message_chars``.

    Raises:
        NodeFailed: The value is not an object, or it sets a reserved key.
        SizeLimitExceeded: The object is larger than ``Limits.max_message_chars``.
    """
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
    reserved = sorted(
        str(name) for name in value
        if name in RESERVED_METADATA_KEYS or str(name).startswith(RESERVED_METADATA_PREFIX)
    )
    if reserved:
        raise NodeFailed(
            f"the metadata object in {key!r} sets {', '.join(map(repr, reserved))}, which only "
            f"the engine may set (reserved: {', '.join(sorted(RESERVED_METADATA_KEYS))} and "
            f"every key starting with {RESERVED_METADATA_PREFIX!r}); rename the key",
            playbook=frame.name,
            node=node,
        )
    limit = frame.services.limits.max_message_chars
    size = json_size(value, limit)
    if size > limit:
        raise SizeLimitExceeded(
            f"the metadata object in {key!r} has more than {limit:,} characters of JSON "
            "(Limits.max_message_chars); nothing was written",
            limit="max_message_chars",
            playbook=frame.name,
            node=node,
        )
    return dict(value)
