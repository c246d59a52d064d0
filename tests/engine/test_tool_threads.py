"""A synchronous tool's call runs in a daemon thread, kept for the next call once its own
has returned; a call that does not return keeps its thread to itself."""

from __future__ import annotations

import asyncio
import threading

import pytest

from sea.engine.tools.threads import Escaped, in_daemon_thread


def _where() -> tuple[threading.Thread, bool, str]:
    thread = threading.current_thread()
    return thread, thread.daemon, thread.name


def test_a_returned_call_leaves_its_thread_to_the_next() -> None:
    async def main() -> list[tuple[threading.Thread, bool, str]]:
        return [await in_daemon_thread(f"call{i}", _where) for i in range(20)]

    seen = asyncio.run(main())
    threads = {thread for thread, _, _ in seen}  # the objects: an ident may be reused
    assert threading.current_thread() not in threads
    assert len(threads) < 5  # kept threads take the next calls (one a call before)
    assert all(daemon for _, daemon, _ in seen)  # daemon threads: they never hold the process
    assert [name for _, _, name in seen] == [f"sea-tool-call{i}" for i in range(20)]


def test_a_call_that_does_not_return_keeps_its_thread() -> None:
    release = threading.Event()
    entered = threading.Event()

    def stuck() -> int:
        entered.set()
        release.wait()
        return threading.get_ident()

    async def main() -> tuple[int, int]:
        held = asyncio.ensure_future(in_daemon_thread("stuck", stuck))
        await asyncio.to_thread(entered.wait)
        other = await in_daemon_thread("other", threading.get_ident)  # not behind it
        release.set()
        return await held, other

    held, other = asyncio.run(main())
    assert held != other


def test_what_a_call_raises_reaches_the_caller() -> None:
    def fails() -> None:
        raise ValueError("no")

    def exits() -> None:
        raise SystemExit(3)

    async def main() -> None:
        with pytest.raises(ValueError, match="no"):
            await in_daemon_thread("fails", fails)
        with pytest.raises(Escaped) as caught:
            await in_daemon_thread("exits", exits)
        assert isinstance(caught.value.inner, SystemExit)
        assert await in_daemon_thread("after", lambda: 7) == 7  # its thread goes on

    asyncio.run(main())
