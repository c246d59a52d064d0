"""A conversation's linear history: one LangGraph checkpoint per pulse.

``checkpoint_id`` is the pulse's id, the parent checkpoint the pulse before it; a state's
values are the conversation's messages up to the end of that pulse. The head state also
carries the interrupt its waiting pulse asks (``tasks[].interrupts``, ``interrupts``,
``next``), as agent-chat-ui reads it after a reload.
"""

from __future__ import annotations

from typing import Any

from sea.errors import ForkUnsupported
from sea.serve.context import ServeContext
from sea.serve.records import ThreadRow
from sea.serve.thread_state import is_conversation, messages_of

READ_LIMIT = 2000
"""The most stored messages a history reads."""


def _checkpoint(thread_id: str, checkpoint_id: str | None) -> dict[str, Any] | None:
    if checkpoint_id is None:
        return None
    return {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id,
            "checkpoint_map": None}


async def states(ctx: ServeContext, row: ThreadRow, *, limit: int) -> list[dict[str, Any]]:
    """The conversation's states, newest first (at least the head, empty or not)."""
    stored = await ctx.call(ctx.store.recent, row.persona, limit=READ_LIMIT,
                            thread=row.memory_thread)
    kept = [m for m in stored if is_conversation(m)]
    pulses: list[str] = []
    for message in kept:
        if message.pulse_id and (not pulses or pulses[-1] != message.pulse_id):
            pulses.append(message.pulse_id)
    pulses = list(dict.fromkeys(pulses))
    keep = ctx.settings.history_limit
    found: list[dict[str, Any]] = []
    for index in range(len(pulses) - 1, -1, -1):
        pulse = pulses[index]
        last = max(i for i, m in enumerate(kept) if m.pulse_id == pulse)
        parent = pulses[index - 1] if index > 0 else None
        at = kept[last].created_at.isoformat()
        found.append(_state(row, messages_of(kept[:last + 1], keep), pulse, parent, at,
                            head=not found))
        if len(found) >= limit:
            break
    if not found:
        found.append(_state(row, [], None, None, row.created_at, head=True))
    return found


def _state(row: ThreadRow, messages: list[dict[str, Any]], checkpoint: str | None,
           parent: str | None, at: str, *, head: bool) -> dict[str, Any]:
    interrupts = row.interrupts if head else []
    tasks = [{"id": item["id"], "name": str(item["value"].get("sea", {}).get("node", "approval")),
              "path": [], "error": None, "interrupts": [item], "checkpoint": None,
              "state": None, "result": None} for item in interrupts]
    return {
        "values": {"messages": messages},
        "next": [task["name"] for task in tasks],
        "tasks": tasks,
        "checkpoint": _checkpoint(row.thread_id, checkpoint),
        "parent_checkpoint": _checkpoint(row.thread_id, parent),
        "metadata": {"source": "loop", "step": 0, "pulse_id": checkpoint,
                     "thread_id": row.thread_id},
        "created_at": at,
        "interrupts": interrupts,
    }


async def head(ctx: ServeContext, row: ThreadRow) -> str | None:
    """The conversation's head checkpoint id (its newest pulse), None when it has none."""
    newest = await ctx.call(ctx.store.recent, row.persona, limit=1, thread=row.memory_thread)
    return newest[-1].pulse_id if newest else None


async def check_head(ctx: ServeContext, row: ThreadRow, checkpoint: Any,
                     checkpoint_id: Any) -> None:
    """Refuse a run asked to start from another checkpoint than the conversation's head.

    Raises:
        ForkUnsupported: the checkpoint is an older one (a fork, a regenerate).
    """
    given = checkpoint_id
    if isinstance(checkpoint, dict):
        given = checkpoint.get("checkpoint_id") or given
    if not given:
        return
    current = await head(ctx, row)
    if given != current:
        raise ForkUnsupported(
            f"checkpoint {given!r} is not the head of thread {row.thread_id!r} ({current!r}): "
            "SEA cannot run from an older checkpoint (fork, regenerate, edit a message), "
            "as SAIMemory's history is append-only; send the new message at the head")
