"""A synchronous tool's call in a daemon thread, awaited from the event loop.

The loop's default executor is not used: a call that never returns would keep one of its
threads, and ``asyncio.run`` (and the interpreter, at exit) wait for those threads, so a
stuck tool would hold the process after its deadline. A daemon thread is abandoned at the
deadline (a thread cannot be stopped) and does not keep the process alive. What the call
raises is raised to the awaiting coroutine; what is not an ``Exception`` (``SystemExit``,
``KeyboardInterrupt``, ``GeneratorExit``...) is carried by :class:`Escaped`, so that it never
reaches the loop's own machinery as itself.

The daemon threads are kept for the next call once theirs has returned (starting a thread
costs a hand-over to it, and a pulse calls several tools): an idle one takes the next call,
and ends after :data:`IDLE_SECONDS` without one, or at once if :data:`MAX_IDLE` are idle. A
call that never returns keeps its thread to itself, as before; the next call gets another.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

IDLE_SECONDS = 30.0
"""How long a kept thread waits for another call before it ends."""
MAX_IDLE = 8
"""How many threads are kept idle at most (more end at once)."""


class Escaped(Exception):
    """What a tool raised that is not an ``Exception``, carried as one (``inner``)."""

    def __init__(self, inner: BaseException) -> None:
        super().__init__(f"{type(inner).__name__}: {inner}")
        self.inner = inner


class _Worker:
    """A daemon thread that runs the calls handed to it, one at a time, kept idle between."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], Callable[[], None]]] = queue.SimpleQueue()

    def loop(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with _lock:
                    if self in _idle:  # nobody took it meanwhile: it ends
                        _idle.remove(self)
                        return
                continue  # taken just now: its call is on the way
            deliver = job()
            del job
            with _lock:  # idle before its result is delivered: the next call may take it
                kept = len(_idle) < MAX_IDLE
                if kept:
                    _idle.append(self)
            deliver()
            del deliver
            if not kept:
                return


_lock = threading.Lock()
_idle: list[_Worker] = []
"""Threads waiting for a call (the last one idle is taken first)."""


def _forget_after_fork() -> None:
    """A forked child has none of its parent's threads."""
    global _lock
    _lock = threading.Lock()
    _idle.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def _hand(name: str, job: Callable[[], Callable[[], None]]) -> None:
    """Run ``job`` in an idle kept thread, or in a new one (then what it returns, which
    delivers its result, once the thread is idle again)."""
    with _lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker()
        worker.jobs.put(job)
        threading.Thread(target=worker.loop, name=f"sea-tool-{name}", daemon=True).start()
    else:
        worker.jobs.put(job)


async def in_daemon_thread(name: str, func: Callable[..., T], /, *args: Any,
                           **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` in a daemon thread (a kept one or a new one, named after
    ``name``), with the caller's context variables; its result, or what it raised."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():  # abandoned at its deadline, or cancelled
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def work() -> Callable[[], None]:
        threading.current_thread().name = f"sea-tool-{name}"
        value: Any = None
        error: BaseException | None = None
        try:
            value = context.run(func, *args, **kwargs)
        except Exception as exc:
            error = exc
        except BaseException as exc:  # every way out, handed to the awaiting coroutine
            error = Escaped(exc)

        def deliver() -> None:
            try:
                loop.call_soon_threadsafe(settle, value, error)
            except RuntimeError:
                pass  # the loop is closed: nobody waits for this call any more

        return deliver

    _hand(name, work)
    return await future
