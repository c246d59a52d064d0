"""Chat messages as plain ``{"role", "content"}`` records (for call records and traces)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def message_dicts(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """``[{"role": "system" | "user" | "assistant" | "tool", "content": text}]``, in order."""
    return [{"role": _ROLES.get(m.type, m.type), "content": str(m.text)} for m in messages]
