"""A LangGraph run request read as SEA's: the pulse's input, arguments and answer.

``input.messages``: the newest ``human`` message is what the user says (its text parts
joined); its ``id`` becomes the stored message's uid, so the client finds its optimistic
message again in the state. ``context`` (and the rest of ``input``) are the playbook's
arguments, only those it declares. ``command.resume`` answers a waiting pulse
(:func:`sea.serve.thread_state.answer_of`); ``command.goto`` ``"__end__"`` (agent-chat-ui's
"mark as resolved") refuses it; ``command.update`` and other ``goto`` answer 422.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from sea.errors import InvalidRequest, StateEditUnsupported
from sea.lang.models import Playbook

_UID = re.compile(r"^[A-Za-z0-9_.:-]{1,120}$")


class RunCreate(BaseModel):
    """The body of ``POST /threads/{id}/runs``, ``/runs/stream`` and ``/runs/wait``."""

    model_config = ConfigDict(extra="allow")
    assistant_id: str = "agent"
    input: dict[str, Any] | None = None
    command: dict[str, Any] | None = None
    stream_mode: str | list[str] | None = None
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None
    checkpoint_id: str | None = None
    interrupt_before: Any = None
    interrupt_after: Any = None
    multitask_strategy: Literal["reject", "interrupt", "rollback", "enqueue"] = "reject"
    on_disconnect: Literal["cancel", "continue"] | None = None
    if_not_exists: Literal["create", "reject"] | None = None
    after_seconds: float | None = None


def user_message(body: RunCreate) -> tuple[str, str | None, dict[str, Any]]:
    """What the user says: its text, its client id (when usable as a uid), and metadata.

    Raises:
        InvalidRequest: no human message with text.
    """
    given = body.input or {}
    messages = given.get("messages")
    if isinstance(messages, dict):
        messages = [messages]
    if isinstance(messages, str):
        messages = [{"type": "human", "content": messages}]
    humans = [m for m in messages or () if isinstance(m, Mapping)
              and m.get("type", m.get("role")) in ("human", "user")]
    if not humans:
        raise InvalidRequest("the run has no input: send input.messages with a human "
                             "message, or command.resume to answer a waiting pulse")
    message = humans[-1]
    text = _text(message.get("content"))
    if not text.strip():
        raise InvalidRequest("the human message has no text")
    uid = message.get("id")
    uid = uid if isinstance(uid, str) and _UID.match(uid) else None
    metadata: dict[str, Any] = {}
    if uid is not None:
        metadata["client_message_id"] = uid
    return text, uid, metadata


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
                         for part in content
                         if not isinstance(part, Mapping) or part.get("type", "text") == "text")
    return ""


def args_of(body: RunCreate, playbook: Playbook) -> dict[str, Any]:
    """The playbook's arguments: ``context``, ``config.configurable`` and the keys of
    ``input`` beside ``messages``, those the playbook declares.

    Raises:
        InvalidRequest: an argument the playbook does not declare.
    """
    declared = {param.name for param in playbook.input_schema} - {"input"}
    given: dict[str, Any] = {}
    configurable = (body.config or {}).get("configurable")
    if isinstance(configurable, Mapping):
        given.update({k: v for k, v in configurable.items() if k in declared})
    given.update({k: v for k, v in (body.input or {}).items() if k != "messages"})
    given.update(body.context or {})
    unknown = sorted(set(given) - declared)
    if unknown:
        names = ", ".join(sorted(declared)) or "none"
        raise InvalidRequest(f"playbook {playbook.name!r} has no argument {unknown[0]!r} "
                             f"(it takes: {names})")
    return given


def check_supported(body: RunCreate) -> None:
    """Refuse what SEA cannot do with a clear reason.

    Raises:
        InvalidRequest: breakpoints (``interrupt_before``/``after``), a delayed run.
        StateEditUnsupported: ``command.update``, a ``goto`` other than ``__end__``.
    """
    if body.interrupt_before or body.interrupt_after:
        raise InvalidRequest("SEA has no breakpoints yet (interrupt_before/interrupt_after); "
                             "a pulse pauses where a playbook asks a person")
    if body.after_seconds:
        raise InvalidRequest("delayed runs (after_seconds) are not supported; use SEA's "
                             "schedules")
    command = body.command or {}
    if command.get("update") is not None:
        raise StateEditUnsupported("Command(update=...) would edit the conversation's state, "
                                   "which is the persona's append-only memory")
    goto = command.get("goto")
    if goto not in (None, "__end__", ["__end__"]):
        raise StateEditUnsupported(f"Command(goto={goto!r}): SEA goes only to the end of a "
                                   "waiting pulse (goto='__end__' refuses its request)")


def is_answer(body: RunCreate) -> bool:
    """The run answers a waiting pulse (``command.resume`` or ``goto: __end__``)."""
    command = body.command or {}
    return "resume" in command or command.get("goto") is not None
