"""One pulse at a time per persona: the persona's turn, in this process and across processes.

A pulse drives only while it holds its persona's turn (:meth:`PersonaTurns.turn`): first
the runtime's own lock of the persona (first come, first served), then the store's
persona lock (:meth:`saimemory.base.MessageStore.persona_lock`: a file lock beside a
SQLite store, a PostgreSQL advisory lock), which other processes on the same store
respect. Two pulses of one persona therefore never interleave their turns in memory.

The runtime's own lock works across event loops: a host's async calls run on the host's
loop, its synchronous calls on the runtime's loop thread, and both wait in one queue.
The store's lock never blocks a thread: it is tried and, while another process holds it,
tried again with a growing pause, so a waiting pulse can time out or be cancelled.

A pulse that finds its persona busy waits (:class:`BusyPolicy` ``when="wait"``, up to
``timeout`` seconds) or fails at once (``"fail"``) with :class:`sea.errors.PersonaBusy`;
either way a pulse that did not get its turn did nothing and stored nothing.

Pulses have a priority (:data:`PRIORITIES`: ``user`` over ``autonomous`` over
``scheduled``; the host says which each pulse has). Waiting pulses take their turns by
priority, first come first served within one. A pulse that comes while one of lower priority
holds the turn always waits (whatever ``when``), and asks the holder to yield: the holder
does so at its next safe point (:meth:`Turn.safe_point`, before each node it runs, where its
state is whole), handing its turn on, and then, as the host chose
(:attr:`BusyPolicy.preempted`), waits to go on where it stopped (``"resume"``) or ends, its
work so far kept (``"drop"``, :class:`sea.errors.PulseCancelled`).

A pulse of higher priority may also wait outside the runtime, in a queue the host reads (a
worker's: :mod:`sea.queue.worker`); the host says so with
:meth:`PersonaTurns.waits_elsewhere`. The running pulse of lower priority then stops at its
next safe point with :class:`sea.errors.PulseCancelled` (code :data:`PREEMPTED`, its
checkpoint whole), and the host queues it again to go on from there, or drops it.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from time import monotonic
from typing import Any, Literal, cast

from saimemory.base import MessageStore
from saimemory.locks import PersonaLock
from sea.errors import PersonaBusy, PulseCancelled, UsageError

WhenBusy = Literal["wait", "fail"]
Priority = Literal["user", "autonomous", "scheduled"]
PRIORITIES: dict[str, int] = {"user": 2, "autonomous": 1, "scheduled": 0}
"""Each priority's rank: a pulse of a higher one preempts a running one of a lower one."""
BAD_PRIORITY = "SEA369"
"""A priority that is not one of :data:`PRIORITIES`."""
PREEMPTED = "SEA597"
"""The code of the :class:`~sea.errors.PulseCancelled` a pulse stops with for a pulse of
higher priority that waits outside the runtime (its host queues it again or drops it)."""
WhenPreempted = Literal["resume", "drop"]
FIRST_PAUSE_S = 0.005
LONGEST_PAUSE_S = 0.1


def priority_rank(priority: object) -> int:
    """The rank of a priority (:data:`PRIORITIES`).

    Raises:
        UsageError: not one of them (SEA369).
    """
    if not isinstance(priority, str) or priority not in PRIORITIES:
        raise UsageError(f"priority must be one of {', '.join(PRIORITIES)}, not "
                         f"{priority!r}", code=BAD_PRIORITY)
    return PRIORITIES[priority]



def priority_of(text: Any, otherwise: Priority = "user") -> Priority:
    """A stored priority (a queue's row, a server's run record); one a hand edit broke, or
    none, reads as ``otherwise``: the row still shows and runs."""
    return cast(Priority, text) if isinstance(text, str) and text in PRIORITIES else otherwise

@dataclass(frozen=True, slots=True)
class BusyPolicy:
    """What a pulse does when its persona is busy.

    Attributes:
        when: ``"wait"`` for the turn (up to ``timeout``) or ``"fail"`` at once.
        timeout: The longest wait, in seconds.
        preempted: What a pulse asked to yield to one of higher priority does after it
            yielded: ``"resume"`` where it stopped once its turn comes again, or ``"drop"``
            (it ends, cancelled; what it stored stays).
    """

    when: WhenBusy = "wait"
    timeout: float = 300.0
    preempted: WhenPreempted = "resume"

    def __post_init__(self) -> None:
        if self.when not in ("wait", "fail"):
            raise UsageError(f"when_busy must be 'wait' or 'fail', not {self.when!r}")
        if self.preempted not in ("resume", "drop"):
            raise UsageError(
                f"when_preempted must be 'resume' or 'drop', not {self.preempted!r}")
        if not self.timeout >= 0:
            raise UsageError(f"busy_timeout must be >= 0 seconds, not {self.timeout!r}")


@dataclass(slots=True)
class _Holder:
    """A pulse's place in its persona's line: its rank, and whether it was asked to yield."""

    rank: int
    asked: bool = False
    """A pulse of higher priority waits: yield at the next safe point."""


@dataclass(slots=True)
class _Waiter:
    """A pulse waiting for the runtime's lock of a persona, on its own event loop."""

    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]
    holder: _Holder
    granted: bool = False
    """The lock was handed to this waiter (set under the mutex by the releasing side)."""


@dataclass(slots=True)
class _Entry:
    """The runtime's lock of one persona: who holds it, and who waits for it, in order
    (by rank, then first come)."""

    holder: _Holder
    waiters: deque[_Waiter] = field(default_factory=deque)

    def queue(self, waiter: _Waiter, *, first: bool) -> None:
        """Line ``waiter`` up behind those of higher rank (and of its own, unless
        ``first``), asking the holder to yield when it outranks it."""
        rank = waiter.holder.rank
        place = next((i for i, w in enumerate(self.waiters)
                      if w.holder.rank < rank or (first and w.holder.rank == rank)),
                     len(self.waiters))
        self.waiters.insert(place, waiter)
        if self.holder.rank < rank:
            self.holder.asked = True


class Turn:
    """A pulse's hold of its persona's turn (what :meth:`PersonaTurns.turn` gives)."""

    def __init__(self, turns: PersonaTurns, persona: str, policy: BusyPolicy, holder: _Holder,
                 on_yield: Callable[[], None]) -> None:
        self._turns = turns
        self._persona = persona
        self._policy = policy
        self._holder = holder
        self._on_yield = on_yield
        self.held = False
        """It holds the runtime's lock of the persona."""
        self.lock: PersonaLock | None = None
        """The store's lock of the persona, while it holds it."""

    async def safe_point(self) -> bool:
        """Where the pulse may yield (before each of its nodes): when a pulse of higher
        priority waits, hand the turn on and, as the policy says, wait for it again (True
        once it has it back) or end.

        Raises:
            PulseCancelled: it yielded and the policy drops it.
            PulseCancelled: (SEA597) a pulse of higher priority waits outside the
                runtime (:meth:`PersonaTurns.waits_elsewhere`): it stops here, for its host
                to queue again or drop.
            PersonaBusy: its turn did not come back within the policy's timeout.
        """
        elsewhere = self._turns.outranked(self._persona, self._holder.rank)
        if elsewhere is not None:
            self._on_yield()
            raise PulseCancelled(
                f"pulse {elsewhere!r} of persona {self._persona!r}, of higher priority, "
                "waits in the queue: this one stopped at its safe point (its checkpoint is "
                "whole) and its host queues it again or drops it", code=PREEMPTED)
        if not self._holder.asked:
            return False
        self._on_yield()
        await self.release()
        self._holder.asked = False
        if self._policy.preempted == "drop":
            raise PulseCancelled(
                f"a pulse of higher priority of persona {self._persona!r} came: this one "
                "yielded its turn and was dropped (what it stored stays)")
        policy = BusyPolicy("wait", self._policy.timeout)
        deadline = monotonic() + policy.timeout
        waited = _Once(lambda: None)
        await self._turns.enter(self._persona, policy, deadline, waited, self._holder,
                                first=True)
        self.held = True
        self.lock = await _store_lock(self._turns.store, self._persona, policy, deadline,
                                      waited)
        return True

    async def release(self) -> None:
        """Give back the store's lock and the runtime's, whichever it holds."""
        lock, self.lock = self.lock, None
        if lock is not None:
            if lock.local:
                lock.release()
            else:
                await asyncio.shield(asyncio.to_thread(lock.release))
        if self.held:
            self.held = False
            self._turns.leave(self._persona)


class PersonaTurns:
    """Hands out personas' turns for one runtime and its store.

    Args:
        store: The store whose persona locks keep other processes out.
    """

    def __init__(self, store: MessageStore) -> None:
        self.store = store
        self._mutex = threading.Lock()
        self._held: dict[str, _Entry] = {}
        self._elsewhere: dict[str, tuple[int, str]] = {}

    def busy(self, persona: str) -> bool:
        """Whether a pulse of this runtime holds or waits for the persona's turn."""
        with self._mutex:
            return persona in self._held

    def waits_elsewhere(self, persona: str, priority: Priority | None, pulse: str = "") -> None:
        """Say that ``pulse``, of ``priority``, waits for the persona outside this runtime
        (None: none waits any more). A pulse of the persona of lower priority that holds
        its turn, or takes it later, stops at its next safe point
        (:class:`sea.errors.PulseCancelled` with ``SEA597``).

        Raises:
            UsageError: an unknown priority (SEA369).
        """
        with self._mutex:
            if priority is None:
                self._elsewhere.pop(persona, None)
            else:
                self._elsewhere[persona] = (priority_rank(priority), pulse)

    def outranked(self, persona: str, rank: int) -> str | None:
        """The pulse waiting outside the runtime that outranks a pulse of ``rank`` of the
        persona, if one does."""
        with self._mutex:
            found = self._elsewhere.get(persona)
        return found[1] if found is not None and found[0] > rank else None

    @asynccontextmanager
    async def turn(
        self,
        persona: str,
        policy: BusyPolicy,
        on_wait: Callable[[], None],
        *,
        priority: Priority = "user",
        on_yield: Callable[[], None] = lambda: None,
    ) -> AsyncIterator[Turn]:
        """Hold the persona's turn for the body; ``on_wait`` is called once if the pulse
        has to wait for it, ``on_yield`` each time it yields to a pulse of higher priority
        (at :meth:`Turn.safe_point`).

        Raises:
            PersonaBusy: the persona is busy and the policy fails fast, or the wait
                outlasted the policy's timeout.
            UsageError: an unknown priority (SEA369).
        """
        rank = priority_rank(priority)
        deadline = monotonic() + policy.timeout
        waited = _Once(on_wait)
        holder = _Holder(rank)
        await self.enter(persona, policy, deadline, waited, holder)
        turn = Turn(self, persona, policy, holder, on_yield)
        turn.held = True
        try:
            turn.lock = await _store_lock(self.store, persona, policy, deadline, waited)
            yield turn
        finally:
            await turn.release()

    async def enter(
        self, persona: str, policy: BusyPolicy, deadline: float, waited: _Once,
        holder: _Holder, *, first: bool = False,
    ) -> None:
        """Take the runtime's lock of the persona for ``holder``, waiting in line."""
        loop = asyncio.get_running_loop()
        with self._mutex:
            entry = self._held.get(persona)
            if entry is None:
                self._held[persona] = _Entry(holder)
                return
            if policy.when == "fail" and entry.holder.rank >= holder.rank:
                raise _busy(persona, "another pulse of this runtime is running")
            waiter = _Waiter(loop, loop.create_future(), holder)
            entry.queue(waiter, first=first)
        waited()
        try:
            await asyncio.wait_for(waiter.future, max(0.0, deadline - monotonic()))
        except (TimeoutError, asyncio.CancelledError) as exc:
            with self._mutex:
                granted = waiter.granted
                if not granted:
                    entry.waiters.remove(waiter)
            if granted:  # handed over as the wait ended: pass it on
                self.leave(persona)
            if isinstance(exc, TimeoutError):
                raise _busy(persona, f"still busy after {policy.timeout:g}s") from None
            raise

    def leave(self, persona: str) -> None:
        """Hand the persona's lock to the first waiter still waiting, or free it."""
        with self._mutex:
            entry = self._held[persona]
            while entry.waiters:
                waiter = entry.waiters.popleft()
                try:
                    waiter.loop.call_soon_threadsafe(_wake, waiter.future)
                except RuntimeError:  # its loop is closed: that waiter is gone
                    continue
                waiter.granted = True
                entry.holder = waiter.holder
                if any(w.holder.rank > waiter.holder.rank for w in entry.waiters):
                    waiter.holder.asked = True
                return
            del self._held[persona]


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _Once:
    """Calls a function the first time it is called, never again."""

    def __init__(self, func: Callable[[], None]) -> None:
        self._func: Callable[[], None] | None = func

    def __call__(self) -> None:
        func, self._func = self._func, None
        if func is not None:
            func()


async def _store_lock(
    store: MessageStore, persona: str, policy: BusyPolicy, deadline: float, waited: _Once
) -> PersonaLock:
    """The store's lock of the persona, taken (tried again with growing pauses)."""
    lock = store.persona_lock(persona)  # not taken yet: made without I/O
    pause = FIRST_PAUSE_S
    while not await _try(lock):
        if policy.when == "fail":
            raise _busy(persona, "a pulse of another process is running")
        waited()
        remaining = deadline - monotonic()
        if remaining <= 0:
            raise _busy(persona, f"a pulse of another process still runs after "
                                 f"{policy.timeout:g}s")
        await asyncio.sleep(min(pause, remaining))
        pause = min(pause * 2, LONGEST_PAUSE_S)
    return lock


async def _try(lock: PersonaLock) -> bool:
    """One try of the store's lock (on the loop for a local one, else in a thread); a try
    that finishes after its caller was cancelled releases what it took."""
    if lock.local:
        return lock.try_acquire()
    attempt = asyncio.ensure_future(asyncio.to_thread(lock.try_acquire))
    try:
        return await asyncio.shield(attempt)
    except asyncio.CancelledError:
        loop = asyncio.get_running_loop()
        attempt.add_done_callback(lambda _: loop.run_in_executor(None, lock.release))
        raise


def _busy(persona: str, why: str) -> PersonaBusy:
    return PersonaBusy(
        f"persona {persona!r} is busy: {why}; this pulse did nothing (try again later, or "
        "let it wait for its turn)"
    )
