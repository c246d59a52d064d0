"""Short-term memory: folding the conversation a history budget cut into a persona's rolling
summary, on the light model (``base_specialized`` with the SUMMARY guidelines).

The summary is brought up to date when a call whose context holds Main finds cut messages
newer than what the summary covers; the update is a call of its own, recorded at
``<node>:short_term_memory``. When it fails, the call goes on with the summary it had.
"""

from __future__ import annotations

from collections.abc import Sequence

from saimemory.pins import MAX_SUMMARY_CHARS
from saimemory.records import Message
from sea.lang.trust import neutralize

SHORT_TERM_NODE = ":short_term_memory"
"""The suffix of the node name that records a short-term memory update."""
MESSAGE_CHARS = 300
"""The most characters of one message an update reads."""


def fold_prompt(summary: str | None, messages: Sequence[Message], words: int) -> str:
    """The prompt that asks the light model to fold ``messages`` into ``summary``."""
    lines = []
    for message in messages:
        text = " ".join(message.content.split())
        if len(text) > MESSAGE_CHARS:
            text = text[:MESSAGE_CHARS] + "…"
        lines.append(f"{message.role}: {neutralize(text)}")  # as the model will read it
    earlier = neutralize(summary).strip() if summary else "(none yet)"
    return (
        "Update the summary of an earlier conversation with the messages that follow it.\n"
        f"Summary so far:\n{earlier}\n\n"
        "Messages to add (oldest first):\n" + "\n".join(lines) + "\n\n"
        f"Answer with the updated summary only, at most {words} words."
    )


def summary_text(answer: str) -> str:
    """The model's answer as a summary the store keeps (stripped, cut to its limit)."""
    return answer.strip()[:MAX_SUMMARY_CHARS]
