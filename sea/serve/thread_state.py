"""A conversation's state as LangGraph clients read it, and their answers as SEA's.

Messages: the conversation's stored user and assistant messages (tagged
``conversation``; the engine's own memos are left out), as LangChain message dicts
(``human``/``ai``). A user message keeps the id the client gave it; a pulse's reply has
the id ``<pulse>:<playbook>:<node>:<n>`` (its node's n-th stored reply in the pulse), the id
its streamed chunks carry, so a client merges the stream into the state instead of showing
the reply twice.

Interrupts: an approval request in LangChain's human-in-the-loop shape
(``action_requests`` + ``review_configs``, what agent-chat-ui renders as approve/reject),
with SEA's own request beside it under ``sea``. Answers: ``{"decisions": [...]}`` of that
shape, or any answer SEA reads (:mod:`sea.engine.answers`); the approver is always the key's
name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from saimemory.records import CONVERSATION_TAG, ENGINE_MEMO, Message
from sea.errors import InvalidRequest

Visits = dict[str, int]


def reply_id(pulse_id: str, playbook: str, node: str, visit: int) -> str:
    """The id of a pulse's ``visit``-th stored reply of ``playbook.node``."""
    return f"{pulse_id}:{playbook}:{node}:{visit}"


def visit_key(playbook: str | None, node: str | None) -> str:
    """The key of a node in a visits count."""
    return f"{playbook}.{node}"


def is_conversation(message: Message) -> bool:
    """A user's or a persona's message of the conversation (not an engine memo)."""
    return (message.role in ("user", "assistant") and CONVERSATION_TAG in message.tags
            and not message.metadata.get(ENGINE_MEMO))


def replies_by_node(messages: Iterable[Message]) -> Visits:
    """How many stored replies each node of the messages' pulse wrote."""
    counts: Visits = {}
    for message in messages:
        if message.role == "assistant" and is_conversation(message):
            key = visit_key(message.playbook, message.node)
            counts[key] = counts.get(key, 0) + 1
    return counts


def messages_of(stored: Sequence[Message], limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` conversation messages of ``stored`` (oldest first), as
    LangChain message dicts."""
    kept = [m for m in stored if is_conversation(m)][-limit:]
    seen: dict[tuple[str | None, str], int] = {}
    out: list[dict[str, Any]] = []
    for message in kept:
        if message.role == "user":
            out.append({"type": "human", "id": message.uid, "content": message.content,
                        "additional_kwargs": {}, "response_metadata": {}})
            continue
        key = (message.pulse_id, visit_key(message.playbook, message.node))
        visit = seen[key] = seen.get(key, -1) + 1
        uid = (reply_id(message.pulse_id, str(message.playbook), str(message.node), visit)
               if message.pulse_id else message.uid)
        out.append({"type": "ai", "id": uid, "content": message.content,
                    "additional_kwargs": {}, "response_metadata": {}, "tool_calls": [],
                    "invalid_tool_calls": []})
    return out


def interrupt_id(pulse_id: str, request: Mapping[str, Any]) -> str:
    """A stable id of one approval request of a pulse."""
    where = f"{pulse_id}:{request.get('playbook')}:{request.get('node')}"
    return hashlib.sha256(where.encode()).hexdigest()[:32]


def interrupt_of(pulse_id: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """An approval request as a LangGraph interrupt in the human-in-the-loop shape."""
    actions = _actions(request)
    value = {
        "action_requests": actions,
        "review_configs": [{"action_name": a["name"], "allowed_decisions": ["approve", "reject"]}
                           for a in actions],
        "sea": dict(request),
    }
    return {"id": interrupt_id(pulse_id, request), "value": value}


def _actions(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    where = f"{request.get('playbook')}.{request.get('node')}"
    if isinstance(request.get("specs"), list):  # a plan: one action per spec
        return [{"name": f"spec {spec.get('id')}: {spec.get('op')} {spec.get('path')}",
                 "args": {k: spec.get(k) for k in ("id", "op", "path", "risk", "summary")},
                 "description": str(spec.get("diff") or spec.get("summary") or "")}
                for spec in request["specs"] if isinstance(spec, Mapping)]
    if isinstance(request.get("plan"), list):  # an actions plan, approved as a whole
        return [{"name": str(step.get("tool") or step.get("name") or "action"),
                 "args": dict(step.get("parameters") or step.get("args") or {}),
                 "description": f"planned action of {where}"}
                for step in request["plan"] if isinstance(step, Mapping)] or [
                    {"name": "actions", "args": {}, "description": str(request.get("action"))}]
    if request.get("tool") is not None:
        return [{"name": str(request["tool"]), "args": dict(request.get("args") or {}),
                 "description": f"{request.get('action', 'tool call')} ({where})"}]
    if request.get("playbook_name") is not None:
        return [{"name": "run_playbook", "args": {"playbook": request["playbook_name"]},
                 "description": f"{request.get('action', 'run a playbook')} ({where})"}]
    return [{"name": str(request.get("action") or "approve"), "args": {},
             "description": f"approval asked at {where}"}]


def answer_of(resume: Any, approver: str, requests: Sequence[Mapping[str, Any]]) -> Any:
    """SEA's answer to a waiting pulse from a ``Command(resume=...)`` value.

    ``{"decisions": [...]}``: all ``approve`` approves, all ``reject`` refuses (the first
    ``message`` is the reason), a mix approves the specs (of a plan) whose decisions are
    ``approve``. Any other value is read as SEA's own answer. A client's ``approver`` is
    never taken: the key's name is.

    Raises:
        InvalidRequest: decisions SEA cannot follow (``edit``, an unknown type, none).
    """
    if isinstance(resume, list) and resume and isinstance(resume[0], Mapping) \
            and "decisions" in resume[0]:  # a resume map per interrupt: the first one
        resume = resume[0]
    if isinstance(resume, Mapping) and len(resume) == 1 and "decisions" not in resume \
            and isinstance(next(iter(resume.values())), Mapping):
        resume = next(iter(resume.values()))  # {interrupt_id: value}
    if isinstance(resume, Mapping) and "decisions" in resume:
        return _decided(resume["decisions"], approver, requests)
    if isinstance(resume, Mapping):
        answer = dict(resume)
        answer["approver"] = approver
        return answer
    if isinstance(resume, bool):
        return {"approved": resume, "approver": approver}
    if isinstance(resume, str):
        return {"approved": resume.strip().lower() in ("approve", "approved", "yes", "ok",
                                                       "allow", "all", "y"),
                "approver": approver}
    raise InvalidRequest("a resume value is {\"decisions\": [{\"type\": \"approve\"}]}, "
                         "true/false, or one of SEA's answers")


def _decided(decisions: Any, approver: str, requests: Sequence[Mapping[str, Any]]) -> Any:
    if not isinstance(decisions, list) or not decisions \
            or not all(isinstance(d, Mapping) for d in decisions):
        raise InvalidRequest("resume.decisions must be a non-empty list of "
                             "{\"type\": \"approve\" | \"reject\"}")
    kinds = [str(d.get("type")) for d in decisions]
    if "edit" in kinds or "response" in kinds:
        raise InvalidRequest("SEA cannot change or answer a gated call's arguments; decide "
                             "approve or reject")
    if any(kind not in ("approve", "reject") for kind in kinds):
        raise InvalidRequest(f"unknown decision type in {kinds}: use approve or reject")
    reason = next((str(d.get("message")) for d in decisions
                   if d.get("type") == "reject" and d.get("message")), "")
    if all(kind == "approve" for kind in kinds):
        return {"approved": True, "approver": approver}
    if all(kind == "reject" for kind in kinds):
        return {"approved": False, "approver": approver, "reason": reason}
    specs = next((r["specs"] for r in requests if isinstance(r.get("specs"), list)), None)
    if specs is None or len(specs) != len(decisions):
        raise InvalidRequest("mixed decisions answer a plan's specs one by one; this "
                             "request is approved or rejected as a whole")
    ids = [str(spec.get("id")) for spec, kind in zip(specs, kinds, strict=True)
           if kind == "approve"]
    return {"ids": ids, "approver": approver, "reason": reason}
