"""Thread rows over an open transaction: the main thread, sub-threads, imported threads."""

from __future__ import annotations

from collections.abc import Iterable

from saimemory.errors import NotFoundError
from saimemory.prepare import from_micros
from saimemory.records import NewThread, Thread
from saimemory.tx import Row, Tx, main_thread_id

THREAD_COLUMNS = (
    "t.id, t.persona, t.parent, t.title, t.created_us, s.is_open, s.closed_us, s.chronicle"
)
THREAD_FROM = "threads t LEFT JOIN thread_states s ON s.thread_id = t.id"
"""Select :data:`THREAD_COLUMNS` from this: a thread with its open/closed state, if any."""


def to_thread(row: Row) -> Thread:
    """A ``threads`` row (selected as :data:`THREAD_COLUMNS`) as a record."""
    return Thread(
        id=row[0], persona=row[1], parent=row[2], title=row[3], created_at=from_micros(row[4]),
        open=bool(row[5]), closed_at=None if row[6] is None else from_micros(row[6]),
        chronicle=row[7],
    )


def get_thread(tx: Tx, thread_id: str) -> Thread | None:
    """The thread with this id, if any."""
    rows = tx.fetch(f"SELECT {THREAD_COLUMNS} FROM {THREAD_FROM} WHERE t.id = ?", (thread_id,))
    return to_thread(rows[0]) if rows else None


def open_sub_thread(tx: Tx, thread: NewThread, now_us: int) -> Thread:
    """The sub-thread ``thread.id``, created when missing and marked open."""
    found = get_thread(tx, thread.id)
    if found is None:
        insert_sub_thread(tx, thread, now_us)
    elif found.persona != thread.persona or found.parent is None:
        raise NotFoundError(f"persona {thread.persona!r} has no sub-thread {thread.id!r}")
    _set_state(tx, thread.id, thread.persona, is_open=True, closed_us=None, chronicle=None)
    opened = get_thread(tx, thread.id)
    assert opened is not None
    return opened


def close_sub_thread(
    tx: Tx, persona: str, thread_id: str, chronicle: str | None, now_us: int
) -> Thread:
    """Mark a sub-thread of ``persona`` closed, with its chronicle."""
    found = get_thread(tx, thread_id)
    if found is None or found.persona != persona or found.parent is None:
        raise NotFoundError(f"persona {persona!r} has no sub-thread {thread_id!r}")
    _set_state(tx, thread_id, persona, is_open=False, closed_us=now_us, chronicle=chronicle)
    closed = get_thread(tx, thread_id)
    assert closed is not None
    return closed


def _set_state(
    tx: Tx, thread_id: str, persona: str, *, is_open: bool, closed_us: int | None,
    chronicle: str | None,
) -> None:
    tx.run("DELETE FROM thread_states WHERE thread_id = ?", (thread_id,))
    tx.run(
        "INSERT INTO thread_states (thread_id, persona, is_open, closed_us, chronicle) "
        "VALUES (?, ?, ?, ?, ?)",
        (thread_id, persona, int(is_open), closed_us, chronicle),
    )


def ensure_main(tx: Tx, persona: str, now_us: int) -> Thread:
    """The persona's main thread, created if missing."""
    thread_id = main_thread_id(persona)
    found = get_thread(tx, thread_id)
    if found is not None:
        return found
    tx.run(
        "INSERT INTO threads (id, persona, parent, title, is_main, created_us) "
        "VALUES (?, ?, NULL, 'main', 1, ?)",
        (thread_id, persona, now_us),
    )
    return Thread(thread_id, persona, None, "main", from_micros(now_us))


def writable_thread(tx: Tx, persona: str, thread: str | None, now_us: int) -> str:
    """The id of the thread a message of ``persona`` goes to (None: the main thread, created
    if missing). Only the thread's owner is read: every append asks."""
    if thread is None:
        thread_id = main_thread_id(persona)
        if not tx.fetch("SELECT 1 FROM threads WHERE id = ?", (thread_id,)):
            ensure_main(tx, persona, now_us)
        return thread_id
    found = tx.fetch("SELECT persona FROM threads WHERE id = ?", (thread,))
    if not found or found[0][0] != persona:
        raise NotFoundError(f"persona {persona!r} has no thread {thread!r}")
    return thread


def insert_sub_thread(tx: Tx, thread: NewThread, now_us: int) -> Thread:
    """Create a sub-thread with a known id under ``thread.parent`` (None: main)."""
    parent = writable_thread(tx, thread.persona, thread.parent, now_us)
    tx.run(
        "INSERT INTO threads (id, persona, parent, title, is_main, created_us) "
        "VALUES (?, ?, ?, ?, 0, ?)",
        (thread.id, thread.persona, parent, thread.title, now_us),
    )
    return Thread(thread.id, thread.persona, parent, thread.title, from_micros(now_us))


def ensure_threads(tx: Tx, threads: Iterable[NewThread], needed: set[str], now_us: int) -> None:
    """Create each thread of ``needed`` that ``threads`` describes and the store lacks, its
    parents first. A thread the persona already has is kept as it is."""
    described = {thread.id: thread for thread in threads}
    done: set[str] = set()

    def ensure(thread_id: str) -> None:
        if thread_id in done or thread_id not in described:
            return
        done.add(thread_id)
        thread = described[thread_id]
        found = get_thread(tx, thread_id)
        if found is not None:
            if found.persona != thread.persona:
                raise NotFoundError(
                    f"thread {thread_id!r} belongs to persona {found.persona!r}, "
                    f"not {thread.persona!r}"
                )
            return
        if thread.parent is not None:
            ensure(thread.parent)
        insert_sub_thread(tx, thread, now_us)

    for thread_id in sorted(needed):
        ensure(thread_id)
