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
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from time import monotonic
from typing import Literal

from saimemory.base import MessageStore
from saimemory.locks import PersonaLock
from sea.errors import PersonaBusy, UsageError

WhenBusy = Literal["wait", "fail"]
FIRST_PAUSE_S = 0.005
LONGEST_PAUSE_S = 0.1


@dataclass(frozen=True, slots=True)
class BusyPolicy:
    """What a pulse does when its persona is busy.

    Attributes:
        when: ``"wait"`` for the turn (up to ``timeout``) or ``"fail"`` at once.
        timeout: The longest wait, in seconds.
    """

    when: WhenBusy = "wait"
    timeout: float = 300.0

    def __post_init__(self) -> None:
        if self.when not in ("wait", "fail"):
            raise UsageError(f"when_busy must be 'wait' or 'fail', not {self.when!r}")
        if not self.timeout >= 0:
            raise UsageError(f"busy_timeout must be >= 0 seconds, not {self.timeout!r}")


@dataclass(slots=True)
class _Waiter:
    """A pulse waiting for the runtime's lock of a persona, on its own event loop."""

    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]
    granted: bool = False
    """The lock was handed to this waiter (set under the mutex by the releasing side)."""


@dataclass(slots=True)
class _Entry:
    """The runtime's lock of one persona: held or not, and who waits for it, in order."""

    waiters: deque[_Waiter] = field(default_factory=deque)


class PersonaTurns:
    """Hands out personas' turns for one runtime and its store.

    Args:
        store: The store whose persona locks keep other processes out.
    """

    def __init__(self, store: MessageStore) -> None:
        self._store = store
        self._mutex = threading.Lock()
        self._held: dict[str, _Entry] = {}

    def busy(self, persona: str) -> bool:
        """Whether a pulse of this runtime holds or waits for the persona's turn."""
        with self._mutex:
            return persona in self._held

    @asynccontextmanager
    async def turn(
        self, persona: str, policy: BusyPolicy, on_wait: Callable[[], None]
    ) -> AsyncIterator[None]:
        """Hold the persona's turn for the body; ``on_wait`` is called once if the pulse
        has to wait for it.

        Raises:
            PersonaBusy: the persona is busy and the policy fails fast, or the wait
                outlasted the policy's timeout.
        """
        deadline = monotonic() + policy.timeout
        waited = _Once(on_wait)
        await self._enter(persona, policy, deadline, waited)
        try:
            lock = await _store_lock(self._store, persona, policy, deadline, waited)
            try:
                yield
            finally:
                if lock.local:
                    lock.release()
                else:
                    await asyncio.shield(asyncio.to_thread(lock.release))
        finally:
            self._leave(persona)

    async def _enter(
        self, persona: str, policy: BusyPolicy, deadline: float, waited: _Once
    ) -> None:
        loop = asyncio.get_running_loop()
        with self._mutex:
            entry = self._held.get(persona)
            if entry is None:
                self._held[persona] = _Entry()
                return
            if policy.when == "fail":
                raise _busy(persona, "another pulse of this runtime is running")
            waiter = _Waiter(loop, loop.create_future())
            entry.waiters.append(waiter)
        waited()
        try:
            await asyncio.wait_for(waiter.future, max(0.0, deadline - monotonic()))
        except (TimeoutError, asyncio.CancelledError) as exc:
            with self._mutex:
                granted = waiter.granted
                if not granted:
                    entry.waiters.remove(waiter)
            if granted:  # handed over as the wait ended: pass it on
                self._leave(persona)
            if isinstance(exc, TimeoutError):
                raise _busy(persona, f"still busy after {policy.timeout:g}s") from None
            raise

    def _leave(self, persona: str) -> None:
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
