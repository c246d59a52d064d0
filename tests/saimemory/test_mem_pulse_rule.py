"""The pulse rule: what an LLM node of pulse P in scope S sees (conformance, every backend)."""

from __future__ import annotations

from saimemory import CONVERSATION_TAG, HistoryBudget, NewMessage
from saimemory.budget import truncation_marker
from saimemory.sqlbase import HISTORY_PAGE, SqlStore

P = "alice"


def say(store: SqlStore, content: str, *, role: str = "user", pulse: str | None = None,
        scope: str = "", conversation: bool = False, tags: tuple[str, ...] = ()) -> int:
    extra = (CONVERSATION_TAG,) if conversation else ()
    return store.append(NewMessage(
        persona=P, role=role, content=content, pulse_id=pulse, scope=scope,  # type: ignore[arg-type]
        tags=tags + extra,
    )).id


def contents(store: SqlStore, **kwargs: object) -> list[str]:
    return [m.content for m in store.history(P, **kwargs)]  # type: ignore[arg-type]


def test_result_visible_in_same_pulse_and_invisible_in_next(store: SqlStore) -> None:
    say(store, "hi", pulse="p1", conversation=True)
    say(store, "<system>found: 42</system>", pulse="p1", tags=("memory_research",))
    assert contents(store, pulse_id="p1") == ["hi", "<system>found: 42</system>"]
    say(store, "and now?", pulse="p2", conversation=True)
    assert contents(store, pulse_id="p2") == ["hi", "and now?"]


def test_earlier_pulse_conversation_comes_before_current_pulse(store: SqlStore) -> None:
    say(store, "q1", pulse="p1", conversation=True)
    say(store, "a1", role="assistant", pulse="p1", conversation=True)
    say(store, "router note", pulse="p1", tags=("router",))
    say(store, "q2", pulse="p2", conversation=True)
    say(store, "note2", pulse="p2")
    assert contents(store, pulse_id="p2") == ["q1", "a1", "q2", "note2"]


def test_messages_without_pulse_are_history_when_conversation(store: SqlStore) -> None:
    say(store, "imported", conversation=True)
    say(store, "untagged legacy")
    assert contents(store, pulse_id="p9") == ["imported"]
    assert contents(store) == ["imported"]


def test_no_pulse_means_only_conversation(store: SqlStore) -> None:
    say(store, "c", pulse="p1", conversation=True)
    say(store, "internal", pulse="p1")
    assert contents(store) == ["c"]


def test_isolated_scope_sees_history_own_scope_and_pulse_conversation(store: SqlStore) -> None:
    say(store, "old", pulse="p0", conversation=True)
    say(store, "user input", pulse="p1", conversation=True)
    say(store, "router io", pulse="p1")
    say(store, "child work", pulse="p1", scope="sub:1")
    say(store, "other child", pulse="p1", scope="sub:2")
    assert contents(store, pulse_id="p1", scope="sub:1") == ["old", "user input", "child work"]
    assert contents(store, pulse_id="p1") == ["old", "user input", "router io"]


def test_current_pulse_keeps_write_order_across_roles(store: SqlStore) -> None:
    ids = [say(store, f"m{i}", role=("user", "assistant", "system")[i % 3], pulse="p")
           for i in range(7)]
    got = store.history(P, pulse_id="p")
    assert [m.id for m in got] == ids == sorted(ids)
    assert [m.role for m in got] == ["user", "assistant", "system"] * 2 + ["user"]


def test_message_budget_keeps_newest_in_order(store: SqlStore) -> None:
    for i in range(10):
        say(store, f"c{i}", pulse=f"p{i}", conversation=True)
    budget = HistoryBudget(max_messages=3, max_chars=1000)
    assert contents(store, pulse_id="now", budget=budget) == ["c7", "c8", "c9"]


def test_char_budget_stops_at_first_message_that_does_not_fit(store: SqlStore) -> None:
    for text in ["a" * 40, "b" * 30, "c" * 30]:
        say(store, text, conversation=True)
    budget = HistoryBudget(max_messages=50, max_chars=65)
    assert contents(store, budget=budget) == ["b" * 30, "c" * 30]


def test_single_huge_message_is_truncated_not_dropped(store: SqlStore) -> None:
    say(store, "small", conversation=True)
    say(store, "x" * 5000, conversation=True)
    budget = HistoryBudget(max_messages=50, max_chars=100)
    got = contents(store, budget=budget)
    assert len(got) == 1
    assert len(got[0]) <= 100
    assert got[0].startswith("x" * 50)
    assert got[0].endswith(truncation_marker(5000 - got[0].index("\n")))


def test_budget_does_not_drop_current_pulse(store: SqlStore) -> None:
    for i in range(5):
        say(store, f"old{i}", conversation=True)
    for i in range(4):
        say(store, f"now{i}", pulse="p")
    budget = HistoryBudget(max_messages=1, max_chars=1000)
    assert contents(store, pulse_id="p", budget=budget) == ["old4"] + [f"now{i}" for i in range(4)]


def test_huge_current_pulse_message_is_truncated(store: SqlStore) -> None:
    say(store, "y" * 300, pulse="p")
    got = contents(store, pulse_id="p", budget=HistoryBudget(max_chars=120))
    assert len(got) == 1 and len(got[0]) <= 120 and "truncated" in got[0]


def test_zero_message_budget_gives_only_current_pulse(store: SqlStore) -> None:
    say(store, "old", conversation=True)
    say(store, "now", pulse="p")
    assert contents(store, pulse_id="p", budget=HistoryBudget(max_messages=0)) == ["now"]


def test_history_is_per_persona_and_per_thread(store: SqlStore) -> None:
    say(store, "mine", conversation=True, pulse="p")
    store.append(NewMessage(persona="bob", role="user", content="bob's", pulse_id="p",
                            tags=(CONVERSATION_TAG,)))
    side = store.create_thread(P, title="side work")
    store.append(NewMessage(persona=P, role="user", content="in side", thread=side.id,
                            pulse_id="p", tags=(CONVERSATION_TAG,)))
    assert contents(store, pulse_id="p") == ["mine"]
    assert contents(store, pulse_id="p", thread=side.id) == ["in side"]
    assert [m.content for m in store.history("bob", pulse_id="p")] == ["bob's"]


def test_write_order_wins_over_given_timestamps(store: SqlStore) -> None:
    from datetime import UTC, datetime

    late = datetime(2030, 1, 1, tzinfo=UTC)
    early = datetime(2001, 1, 1, tzinfo=UTC)
    for content, stamp in (("first", late), ("second", early)):
        store.append(NewMessage(persona=P, role="user", content=content, created_at=stamp,
                                pulse_id="p", tags=(CONVERSATION_TAG,)))
    assert contents(store, pulse_id="q") == ["first", "second"]
    assert contents(store, pulse_id="p") == ["first", "second"]


def test_history_spanning_several_pages_keeps_a_contiguous_newest_run(store: SqlStore) -> None:
    store.append_many([NewMessage(persona=P, role="user", content=f"{i:09d}", pulse_id=f"p{i}",
                                  tags=(CONVERSATION_TAG,)) for i in range(250)])
    got = contents(store, pulse_id="p249", budget=HistoryBudget(max_messages=1000,
                                                                 max_chars=9 * 200))
    assert got == [f"{i:09d}" for i in range(49, 249)] + ["000000249"]
    got = contents(store, pulse_id="now", budget=HistoryBudget(max_messages=130,
                                                                max_chars=10**6))
    assert got == [f"{i:09d}" for i in range(120, 250)]


def test_one_page_and_several_pages_read_the_same_history(store: SqlStore) -> None:
    """A budget of one page is read by one statement on PostgreSQL, a larger one page by
    page: with fewer messages than either, both give the same messages, tags in order."""
    for i in range(5):
        say(store, f"earlier {i}", pulse=f"old{i}", conversation=True, tags=(f"t{i}", "a"))
    say(store, "no tags at all", pulse="old9", conversation=False)
    say(store, "mine", pulse="now", tags=("z", "b"))
    say(store, "other scope", pulse="now", scope="sub")
    say(store, "other scope, conversation", pulse="now", scope="sub", conversation=True)
    say(store, "said last", pulse="now", conversation=True)
    one, paged = (
        store.history(P, pulse_id="now", budget=HistoryBudget(max_messages=size))
        for size in (HISTORY_PAGE, HISTORY_PAGE + 1)
    )
    assert one == paged
    assert [m.content for m in one] == [
        *(f"earlier {i}" for i in range(5)), "mine", "other scope, conversation",
        "said last"]
    assert one[0].tags == ("t0", "a", CONVERSATION_TAG, "pulse:old0")
    assert one[5].tags == ("z", "b", "pulse:now")
    for pulse in (None, "old3"):
        one, paged = (
            store.history(P, pulse_id=pulse, budget=HistoryBudget(max_messages=size))
            for size in (HISTORY_PAGE, HISTORY_PAGE + 1)
        )
        assert one == paged and len(one) == 7
