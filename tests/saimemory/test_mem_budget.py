"""Properties of the budget half of the pulse rule (pure functions, no store)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from saimemory import HistoryBudget, Message
from saimemory.budget import spend, truncate

T = datetime(2025, 1, 1, tzinfo=UTC)


def message(i: int, content: str) -> Message:
    return Message(id=i, persona="p", thread="p:main", role="user", content=content,
                   created_at=T, pulse_id=None, scope="", tags=(), metadata={}, uid=f"u{i}")


budgets = st.builds(HistoryBudget, max_messages=st.integers(0, 8), max_chars=st.integers(1, 300))
sizes = st.lists(st.integers(1, 400), max_size=12)


@given(sizes, budgets)
def test_spend_takes_a_newest_suffix_within_budget(lengths: list[int],
                                                    budget: HistoryBudget) -> None:
    oldest_first = [message(i, "x" * n) for i, n in enumerate(lengths)]
    got = spend(reversed(oldest_first), budget)
    assert len(got) <= budget.max_messages
    assert sum(len(m.content) for m in got) <= max(budget.max_chars, 40)
    assert [m.id for m in got] == [m.id for m in oldest_first][len(oldest_first) - len(got):]
    if oldest_first and budget.max_messages > 0:
        assert got, "one huge message must never empty the history"
    for kept, original in zip(got[1:], oldest_first[len(oldest_first) - len(got) + 1:],
                              strict=True):
        assert kept.content == original.content


@given(st.integers(1, 5000), st.integers(1, 1000))
def test_truncate_respects_the_limit_and_says_so(size: int, limit: int) -> None:
    got = truncate(message(1, "y" * size), limit)
    if size <= limit:
        assert got.content == "y" * size
    else:
        assert "characters truncated]" in got.content
        assert len(got.content) <= max(limit, len(got.content) - got.content.count("y"))
        kept = got.content.count("y")
        assert got.content.endswith(f"[… {size - kept} characters truncated]")


def test_invalid_budgets_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_chars >= 1"):
        HistoryBudget(max_chars=0)
    with pytest.raises(ValueError, match="max_messages >= 0"):
        HistoryBudget(max_messages=-1)
    for odd in (2.5, "50", True, None):  # a history statement writes the number into its SQL
        with pytest.raises(ValueError, match="whole numbers"):
            HistoryBudget(max_messages=odd)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="whole numbers"):
        HistoryBudget(max_chars=1e6)  # type: ignore[arg-type]
