"""Waiting for a person: a LangGraph interrupt the host answers with ``Runtime.arun_resume``.

:func:`ask` pauses the pulse with a request and returns the host's answer when the pulse is
resumed; :func:`require_approval` is a yes/no question on top of it. The answer's forms are
read in one place, :mod:`sea.engine.answers`.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from sea.engine.answers import parse_answer
from sea.engine.pulse import Frame
from sea.errors import ApprovalDenied, NodeFailed


def approved(answer: Any) -> bool:
    """Whether a host's answer approves.

    ``True``, ``"approve"`` / ``"yes"`` / ``"allow"``, ``{"approved": true}`` and a
    selection (``{"all": true}``, ``{"ids": [...]}`` with ids, ``{"up_to": "low"}``)
    approve; see :func:`sea.engine.answers.parse_answer`.
    """
    return parse_answer(answer).approved


def ask(frame: Frame, node: str, action: str, detail: dict[str, Any]) -> Any:
    """Pause the pulse until a person answers; the answer (any JSON value).

    The request the host sees is ``{"action", "playbook", "node", **detail}``. When the
    pulse is resumed the node runs again from its start and this call returns the host's
    answer instead of pausing: whatever the node did before it runs again, so a node does
    nothing with an effect before asking (or finds what it did in
    :meth:`sea.engine.pulse.Pulse.take_pending`).
    """
    if frame.direct:  # found unable to pause when the call began: it has nowhere to wait
        raise NodeFailed(
            f"{action} needs a person's answer, but playbook {frame.name!r} was found unable "
            "to pause when it was called, so it runs without a checkpoint to wait in (did a "
            "playbook file change during the pulse?); run the pulse again",
            playbook=frame.name, node=node)
    request = {"action": action, "playbook": frame.name, "node": node, **detail}
    spent = frame.pulse.caller.meter.node_spent()
    if not spent.is_zero():  # lost with this run of the node; see Meter.credit
        request["spent"] = spent.to_state()
    return interrupt(request)


def require_approval(frame: Frame, node: str, action: str, detail: dict[str, Any]) -> None:
    """Pause the pulse until a person answers; raise :class:`ApprovalDenied` on a no.

    When the pulse is resumed the node runs again from its start and this call returns the
    host's answer instead of pausing.
    """
    answer = ask(frame, node, action, detail)
    if not approved(answer):
        raise ApprovalDenied(
            f"{action} was not approved (answer: {answer!r})", playbook=frame.name, node=node
        )
