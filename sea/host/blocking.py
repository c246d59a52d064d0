"""Synchronous forms of the runtime's async methods, for hosts without an event loop.

Every synchronous call of one owner (a runtime) runs on the same event loop, kept in a
background thread behind an anyio blocking portal and started on first use. Clients that bind
themselves to the loop they first ran on (HTTP clients of model providers do) keep working
from one call to the next, and calls from several host threads run side by side on that loop.

Each wrapper refuses to run inside a running event loop (it would block that loop); the
host awaits the async method there instead.
"""

from __future__ import annotations

import asyncio
import inspect
import queue
import threading
from collections.abc import AsyncGenerator, Callable, Coroutine, Generator
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import anyio
from anyio.from_thread import BlockingPortal

from sea.errors import UsageError

P = ParamSpec("P")
R = TypeVar("R")
E = TypeVar("E")


class LoopThread:
    """One event loop in a daemon thread, started on first use, stopped by :meth:`close`.

    The thread is a daemon so that a host that never closes its runtime still exits.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._portal: BlockingPortal | None = None
        self._thread: threading.Thread | None = None

    def portal(self) -> BlockingPortal:
        """The portal into the loop (the loop starts now if it is not running)."""
        with self._lock:
            if self._portal is None:
                self._portal, self._thread = _start()
            return self._portal

    @property
    def running(self) -> bool:
        """The loop's thread is running."""
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        """Stop the loop and its thread (a later call starts a new one)."""
        with self._lock:
            portal, thread = self._portal, self._thread
            self._portal = self._thread = None
        if portal is not None and thread is not None:
            if thread is not threading.current_thread():
                portal.call(portal.stop, True)
                thread.join()


def _start() -> tuple[BlockingPortal, threading.Thread]:
    ready: queue.Queue[BlockingPortal | BaseException] = queue.Queue(maxsize=1)

    async def serve() -> None:
        try:
            async with BlockingPortal() as portal:
                ready.put(portal)
                await portal.sleep_until_stopped()
        except BaseException as exc:  # reported to the thread that asked for the loop
            if ready.empty():
                ready.put(exc)
            raise

    thread = threading.Thread(
        target=anyio.run, args=(serve,), name="sea-sync-loop", daemon=True
    )
    thread.start()
    started = ready.get()
    if isinstance(started, BaseException):
        raise started
    return started, thread


class HasLoopThread(Protocol):
    """An object whose synchronous methods share one loop thread."""

    @property
    def loop_thread(self) -> LoopThread:
        """The loop every synchronous call of this object runs on."""
        ...


S = TypeVar("S", bound=HasLoopThread)


def blocking(
    method: Callable[Concatenate[S, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[S, P], R]:
    """``method`` run to its end on the owner's loop thread."""

    def run(owner: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        _no_running_loop(method.__name__)

        async def call() -> R:
            return await method(owner, *args, **kwargs)

        return owner.loop_thread.portal().call(call)

    return _named(run, method)


def blocking_stream(
    method: Callable[Concatenate[S, P], AsyncGenerator[E, None]],
) -> Callable[Concatenate[S, P], Generator[E, None, None]]:
    """The items of ``method``'s async generator, each awaited on the owner's loop thread.

    Closing the generator early closes the async one (for a pulse: cancels it).
    """

    def stream(owner: S, /, *args: P.args, **kwargs: P.kwargs) -> Generator[E, None, None]:
        _no_running_loop(method.__name__)
        return _items(owner.loop_thread.portal(), method(owner, *args, **kwargs))

    named = _named(stream, method)
    shown = inspect.signature(method).replace(return_annotation=inspect.Signature.empty)
    named.__signature__ = shown  # type: ignore[attr-defined]  # not the async generator type
    return named


def _items(portal: BlockingPortal, items: AsyncGenerator[E, None]) -> Generator[E, None, None]:
    async def step() -> tuple[bool, E | None]:
        try:
            return True, await anext(items)
        except StopAsyncIteration:
            return False, None

    try:
        while True:
            more, item = portal.call(step)
            if not more:
                return
            yield item  # type: ignore[misc]  # an item when `more`
    finally:
        portal.call(items.aclose)


def _no_running_loop(async_name: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    name = async_name.removeprefix("a")
    raise UsageError(f"{name} called inside a running event loop; use {async_name}")


def _named(wrapper: Callable[P, R], method: Callable[..., Any]) -> Callable[P, R]:
    wrapper.__module__ = method.__module__
    wrapper.__wrapped__ = method  # type: ignore[attr-defined]  # help() shows its parameters
    wrapper.__name__ = method.__name__.removeprefix("a")
    wrapper.__qualname__ = method.__qualname__.replace(method.__name__, wrapper.__name__)
    wrapper.__doc__ = f"Synchronous :meth:`{method.__name__}` (not inside a running event loop)."
    return wrapper
