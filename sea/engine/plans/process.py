"""Running one command with a deadline, in a process group of its own, its output read a
piece at a time and kept up to a number of characters.

The command starts in a new session (its own process group), with no input and only the
environment it is given. Its output (stdout and stderr together) is read as it comes: the
first ``max_chars`` characters are kept and the rest only counted, so a flood of output costs
no memory. When the command ends, or its time is up, its whole group is killed: a grandchild
it left behind (a server, a sleeping watcher) neither outlives it nor keeps the run waiting
by holding the output open. POSIX only (``start_new_session``, ``killpg``).
"""

from __future__ import annotations

import codecs
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

CHUNK = 65536
"""Bytes read from the command's output at a time."""

DRAIN_CHUNKS = 64
"""The most chunks read after the command's group is killed."""

POLL_S = 0.1
"""How often a command that writes nothing is checked for having ended."""


@dataclass(frozen=True, slots=True)
class Finished:
    """How a command ended: its exit status (``None`` when its time ran out and it was
    killed) and its output (cut to the limit, with a note saying so)."""

    exit_code: int | None
    output: str

    @property
    def timed_out(self) -> bool:
        """The command ran out of time."""
        return self.exit_code is None


def run_bounded(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float,
    max_chars: int,
) -> Finished:
    """Run ``argv`` (no shell) in ``cwd`` with exactly ``env``.

    Raises:
        OSError: it could not be started.
    """
    process = subprocess.Popen(
        list(argv), cwd=cwd, env=dict(env), shell=False, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        close_fds=True,
    )
    assert process.stdout is not None
    kept = _Kept(max_chars)
    deadline = time.monotonic() + timeout_s
    timed_out = False
    pipe = process.stdout
    try:
        _follow(process, pipe.fileno(), kept, deadline)
        timed_out = process.poll() is None
    finally:
        _kill_group(process.pid)
        code = process.wait()
        _drain(pipe.fileno(), kept)
        pipe.close()
    return Finished(None if timed_out else code, kept.text())


def _follow(process: subprocess.Popen[bytes], fd: int, kept: _Kept, deadline: float) -> None:
    """Read the output until the command ends (or closes its output and then ends), or
    until the deadline."""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if selector.select(min(left, POLL_S)):
                chunk = os.read(fd, CHUNK)
                if not chunk:  # every writer closed the output: wait for the end
                    with suppress(subprocess.TimeoutExpired):
                        process.wait(timeout=max(deadline - time.monotonic(), 0))
                    return
                kept.add(chunk)
            elif process.poll() is not None:
                return  # it ended; whoever still holds the output is of its group


def _kill_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # nothing of the group is left


def _drain(fd: int, kept: _Kept) -> None:
    """Read what is left in the output without waiting for more (a bounded amount: a
    process that left the group may still be writing)."""
    os.set_blocking(fd, False)
    for _ in range(DRAIN_CHUNKS):
        try:
            chunk = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            return
        kept.add(chunk)


class _Kept:
    """The first ``limit`` characters of a stream of UTF-8 bytes, and how many it had."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self._kept = 0
        self._total = 0

    def add(self, chunk: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(chunk, final)
        self._total += len(text)
        if self._kept < self._limit and text:
            piece = text[:self._limit - self._kept]
            self._parts.append(piece)
            self._kept += len(piece)

    def text(self) -> str:
        self.add(b"", final=True)
        text = "".join(self._parts)
        if self._total > self._limit:
            return text + f"\n… (cut at {self._limit} of {self._total} characters)"
        return text
