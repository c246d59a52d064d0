"""The budget half of the pulse rule, as pure functions over messages."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from saimemory.records import HistoryBudget, Message


def truncation_marker(dropped: int) -> str:
    """The text that replaces the cut end of a message too large for its budget."""
    return f"\n[… {dropped} characters truncated]"


def truncate(message: Message, limit: int) -> Message:
    """``message`` cut to at most ``limit`` characters (marker included) if it is longer."""
    content = message.content
    if len(content) <= limit:
        return message
    keep = max(0, limit - len(truncation_marker(len(content))))
    return replace(message, content=content[:keep] + truncation_marker(len(content) - keep))


def spend(newest_first: Iterable[Message], budget: HistoryBudget) -> list[Message]:
    """Earlier conversation within ``budget``, returned oldest first.

    Messages are taken newest first until ``max_messages`` are taken or the next one does
    not fit in what is left of ``max_chars``. The newest message is always kept (cut with a
    marker when it alone exceeds the budget), so one huge message never empties the history.
    """
    taken: list[Message] = []
    used = 0
    if budget.max_messages == 0:
        return taken
    for message in newest_first:
        size = len(message.content)
        if used + size > budget.max_chars:
            if not taken:
                taken.append(truncate(message, budget.max_chars))
            break
        taken.append(message)
        used += size
        if len(taken) >= budget.max_messages:
            break
    taken.reverse()
    return taken


def clamp(messages: Iterable[Message], budget: HistoryBudget) -> list[Message]:
    """The current pulse's messages, each cut to ``max_chars`` with a marker if larger."""
    return [truncate(message, budget.max_chars) for message in messages]
