"""A synchronous tool's call in a daemon thread of its own, awaited from the event loop.

The loop's default executor is not used: a call that never returns would keep one of its
threads, and ``asyncio.run`` (and the interpreter, at exit) wait for those threads, so a
stuck tool would hold the process after its deadline. A daemon thread is abandoned at the
deadline (a thread cannot be stopped) and does not keep the process alive. What the call
raises is raised to the awaiting coroutine; what is not an ``Exception`` (``SystemExit``,
``KeyboardInterrupt``, ``GeneratorExit``...) is carried by :class:`Escaped`, so that it never
reaches the loop's own machinery as itself.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Escaped(Exception):
    """What a tool raised that is not an ``Exception``, carried as one (``inner``)."""

    def __init__(self, inner: BaseException) -> None:
        super().__init__(f"{type(inner).__name__}: {inner}")
        self.inner = inner


async def in_daemon_thread(name: str, func: Callable[..., T], /, *args: Any,
                           **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` in a new daemon thread (named after ``name``), with the
    caller's context variables; its result, or what it raised."""
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

    def work() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = context.run(func, *args, **kwargs)
        except Exception as exc:
            error = exc
        except BaseException as exc:  # every way out, handed to the awaiting coroutine
            error = Escaped(exc)
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:
            pass  # the loop is closed: nobody waits for this call any more

    threading.Thread(target=work, name=f"sea-tool-{name}", daemon=True).start()
    return await future
