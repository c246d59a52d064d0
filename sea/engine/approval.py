"""Waiting for a person: a LangGraph interrupt the host answers with ``Runtime.resume``."""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from sea.engine.pulse import Frame
from sea.errors import ApprovalDenied

_YES = frozenset({"approve", "approved", "allow", "yes", "y", "ok"})


def approved(answer: Any) -> bool:
    """Whether a host's answer approves.

    ``True``, ``"approve"`` / ``"yes"`` / ``"allow"`` and ``{"approved": true}`` approve.
    """
    if isinstance(answer, bool):
        return answer
    if isinstance(answer, str):
        return answer.strip().lower() in _YES
    if isinstance(answer, dict):
        return answer.get("approved") is True
    return False


def require_approval(frame: Frame, node: str, action: str, detail: dict[str, Any]) -> None:
    """Pause the pulse until a person answers; raise :class:`ApprovalDenied` on a no.

    When the pulse is resumed the node runs again from its start and this call returns the
    host's answer instead of pausing.
    """
    request = {"action": action, "playbook": frame.name, "node": node, **detail}
    answer = interrupt(request)
    if not approved(answer):
        raise ApprovalDenied(
            f"{action} was not approved (answer: {answer!r})", playbook=frame.name, node=node
        )
