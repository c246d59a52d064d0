"""Synchronous forms of the runtime's async methods, for hosts without an event loop.

Each wrapper refuses to run inside a running event loop (it would block that loop); the
host awaits the async method there instead.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, Callable, Coroutine, Generator
from typing import Any, ParamSpec, TypeVar

from sea.errors import UsageError

P = ParamSpec("P")
R = TypeVar("R")
E = TypeVar("E")


def blocking(method: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, R]:
    """``method`` run to its end on a fresh event loop."""

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        _no_running_loop(method.__name__)
        return asyncio.run(method(*args, **kwargs))

    return _named(run, method)


def blocking_stream(
    method: Callable[P, AsyncGenerator[E, None]],
) -> Callable[P, Generator[E, None, None]]:
    """The items of ``method``'s async generator, each awaited on a private event loop.

    The loop runs only while the caller waits for the next item; closing the generator
    early closes the async one (for a pulse: cancels it).
    """

    def stream(*args: P.args, **kwargs: P.kwargs) -> Generator[E, None, None]:
        _no_running_loop(method.__name__)
        return _items(method(*args, **kwargs))

    named = _named(stream, method)
    shown = inspect.signature(method).replace(return_annotation=inspect.Signature.empty)
    named.__signature__ = shown  # type: ignore[attr-defined]  # not the async generator type
    return named


def _items(items: AsyncGenerator[E, None]) -> Generator[E, None, None]:
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(anext(items))
            except StopAsyncIteration:
                return
    finally:
        loop.run_until_complete(items.aclose())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


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
