"""Chat messages as plain ``{"role", "content"}`` records (for call records and traces), and
the ``usage_metadata`` our chat models attach to their answers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langchain_core.messages import BaseMessage
from langchain_core.messages.ai import UsageMetadata

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def message_dicts(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """``[{"role": "system" | "user" | "assistant" | "tool", "content": text}]``, in order."""
    return [{"role": _ROLES.get(m.type, m.type), "content": str(m.text)} for m in messages]


def usage_metadata(input_tokens: int, output_tokens: int) -> UsageMetadata:
    """The ``usage_metadata`` of an answer: tokens in, tokens out and their total."""
    return UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )


def estimate_tokens(texts: Iterable[str]) -> int:
    """About how many tokens ``texts`` hold (four characters a token, at least one each)."""
    return sum(max(1, -(-len(text) // 4)) for text in texts)
