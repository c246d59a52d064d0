"""A command run in a real terminal (tmux, with its own server), and its screen read as a
person sees it: what rich's markup or a live status line does to the text shows here."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest


class Terminal:
    """One tmux window of ``width`` columns running ``argv``; :meth:`close` ends its server."""

    def __init__(self, argv: Sequence[str], *, width: int, cwd: Path, env: dict[str, str]) -> None:
        if shutil.which("tmux") is None:
            pytest.skip("tmux is not installed")
        self._socket = f"sea-test-{uuid.uuid4().hex[:12]}"
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        command = f"cd {shlex.quote(str(cwd))} && env {exports} {shlex.join(argv)}; " \
                  "echo \"[exit $?]\"; sleep 600"
        self._tmux("new-session", "-d", "-x", str(width), "-y", "40", "bash", "-c", command)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self._socket, *args], capture_output=True,
                              text=True, timeout=30, check=True)
        return done.stdout

    def screen(self) -> str:
        """The screen's text, as shown, with what scrolled off above it."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-")

    def wait_for(self, text: str, timeout: float = 60) -> str:
        """The screen once it shows ``text``.

        Raises:
            AssertionError: it does not within ``timeout`` seconds (a guard, not a timing).
        """
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen:\n{screen}")
            time.sleep(0.1)

    def type(self, keys: str) -> None:
        """Type ``keys`` and Enter."""
        self._tmux("send-keys", "-l", keys)
        self._tmux("send-keys", "Enter")

    def interrupt(self) -> None:
        """Press Ctrl-C."""
        self._tmux("send-keys", "C-c")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self._socket, "kill-server"], capture_output=True,
                       timeout=30, check=False)
