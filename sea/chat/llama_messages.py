"""From langchain-core messages to llama chat messages, fitted into a small context window."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
)

from sea.chat.errors import UnsupportedMessage

ChatTurn = dict[str, str]
"""One llama chat message: ``{"role": "system" | "user" | "assistant", "content": text}``."""

_TRUNCATION_MARK = "\n[…]\n"
_CHAT_ROLES = frozenset({"system", "user", "assistant"})


def to_chat_turns(messages: Sequence[BaseMessage]) -> list[ChatTurn]:
    """Map System/Human/AI messages (and ChatMessage with those roles) to llama chat messages.

    Raises:
        UnsupportedMessage: a tool message, an unknown role, or a non-text content block.
    """
    return [{"role": _role_of(m), "content": _text_of(m)} for m in messages]


def _role_of(message: BaseMessage) -> str:
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, ChatMessage) and message.role in _CHAT_ROLES:
        return message.role
    raise UnsupportedMessage(
        f"the local model takes system, human and AI messages, not {type(message).__name__}"
        " (it does not support tool calling)"
    )


def _text_of(message: BaseMessage) -> str:
    content: Any = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__
            raise UnsupportedMessage(f"the local model takes only text, not a {kind!r} block")
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class FittedPrompt:
    """Chat messages that fit the context, and what was cut to make them fit."""

    turns: list[ChatTurn]
    prompt_tokens: int
    dropped_messages: int = 0
    """How many of the oldest non-system messages were left out."""
    truncated_messages: int = 0
    """How many remaining messages had the middle of their text cut out."""

    def trim_report(self) -> dict[str, int] | None:
        """The ``context_trimmed`` entry of the response metadata, or None if nothing was cut."""
        if not (self.dropped_messages or self.truncated_messages):
            return None
        return {
            "dropped_messages": self.dropped_messages,
            "truncated_messages": self.truncated_messages,
            "prompt_tokens": self.prompt_tokens,
        }


def fit_to_context(
    turns: Sequence[ChatTurn], count_tokens: Callable[[list[ChatTurn]], int], budget: int
) -> FittedPrompt:
    """Drop the oldest non-system messages, then shorten the longest, until the prompt fits.

    The most recent non-system message is never dropped. When dropping is not enough, the
    longest remaining message loses the middle of its text (head and tail are kept).

    Args:
        turns: The chat messages, oldest first.
        count_tokens: Tokens of the formatted prompt for a list of messages.
        budget: The most prompt tokens allowed (context size minus the generation budget).
    """
    kept = [dict(t) for t in turns]
    used = count_tokens(kept)
    dropped = 0
    while used > budget:
        droppable = [i for i, t in enumerate(kept[:-1]) if t["role"] != "system"]
        if not droppable:
            break
        del kept[droppable[0]]
        dropped += 1
        used = count_tokens(kept)
    truncated: set[int] = set()
    while used > budget and any(t["content"] for t in kept):
        index = max(range(len(kept)), key=lambda i: len(kept[i]["content"]))
        kept[index]["content"] = _cut_middle(kept[index]["content"], 4 * (used - budget))
        truncated.add(index)
        used = count_tokens(kept)
    return FittedPrompt(kept, used, dropped, len(truncated))


def _cut_middle(text: str, excess_chars: int) -> str:
    """``text`` shortened by at least ``excess_chars`` (at least 16), keeping head and tail."""
    keep = len(text) - max(16, excess_chars) - len(_TRUNCATION_MARK)
    if keep <= 0:
        return ""
    head = keep // 2
    return text[:head] + _TRUNCATION_MARK + text[len(text) - (keep - head) :]
