"""What a short-term summary would fold: the conversation a history's budget cut.

A model call's history keeps the newest earlier conversation its budget allows; what it
cut, the short-term memory summarizes. :meth:`~saimemory.base.MessageStore.main_context`
reads, besides the history, the newest cut messages the summary does not cover yet
(``unfolded``) and whether the budget cut anything at all (``cut``). These functions say
where the cut begins and pick both out of a page of conversation that reaches past it.
"""

from __future__ import annotations

from collections.abc import Sequence

from saimemory.records import Message


def cut_below(history: Sequence[Message], pulse_id: str | None) -> int | None:
    """The id below which the history's earlier conversation was cut: its oldest message's
    (the messages of ``pulse_id`` are not earlier conversation); None when it has none."""
    earlier = [m.id for m in history if pulse_id is None or m.pulse_id != pulse_id]
    return min(earlier) if earlier else None


def nothing_cut(before: int | None, max_messages: int) -> bool:
    """Whether the budget can have cut nothing: the history holds no earlier conversation
    though its budget allows some, so there is none (the newest message is always kept)."""
    return before is None and max_messages > 0


def fold_from_page(
    page: Sequence[Message], before: int | None, covered: int, fold: int
) -> tuple[bool, list[Message]]:
    """``(cut, unfolded)`` from ``page``: the conversation the history reads its earlier
    part from (newest first), holding every message of it older than ``before`` or at
    least ``fold`` of them. ``unfolded`` is the newest ``fold`` of them newer than
    ``covered`` (the summary's last message), oldest first."""
    older = [m for m in page if before is None or m.id < before]
    unfolded = [m for m in older if m.id > covered][:fold]
    unfolded.reverse()
    return bool(older), unfolded
