"""A real ``sea serve`` process on a free loopback port, with the scripted model.

One per test module (the fixture's scope): its store, playbooks and script in a temporary
directory. Tests talk to it over HTTP, as any client does.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[2]

CHAT = {
    "name": "chat", "description": "Answers the user.", "user_selectable": True,
    "start_node": "reply",
    "nodes": [{"id": "reply", "type": "llm", "action": None, "context_profile": "conversation",
               "speak": True, "memorize": {"tags": ["conversation"]}}],
}
SLOW = {**CHAT, "name": "slow", "description": "Answers the user at length, slowly."}
ASKING = {
    "name": "asking", "description": "Looks at memory once a person approves, then answers.",
    "user_selectable": True, "start_node": "look",
    "nodes": [
        {"id": "look", "type": "tool", "action": "memory_recent", "args": {"limit": 1},
         "next": "reply", "error_next": "reply"},
        {"id": "reply", "type": "llm", "action": None, "context_profile": "conversation",
         "speak": True, "memorize": {"tags": ["conversation"]}},
    ],
}
REPLY = "Hello there, friend. How are you?"
LONG = " ".join(f"w{i}" for i in range(200))
"""The slow playbook's reply: 200 chunks, :data:`CHUNK_DELAY_S` apart (4 s; 2 s at
:data:`QUICK_CHUNK_DELAY_S`)."""
ROUTED = {"playbook": "basic_chat", "reason": "a greeting"}
"""The bundled ``meta_user``'s router's answer: just speak (then ``sub_speak`` says
:data:`SPOKEN`)."""
SPOKEN = " ".join(f"w{i}" for i in range(120))
"""``sub_speak``'s reply: 120 chunks, :data:`CHUNK_DELAY_S` apart (2.4 s: long enough to see
it run)."""
CHUNK_DELAY_S = 0.02
"""Seconds between two chunks of a reply, unless a server is started with another script."""
QUICK_CHUNK_DELAY_S = 0.01
"""The same for the servers of the ``server`` fixtures (conftest): a slow run still outlasts by
far what their tests do while it runs, and a test that waits for its end waits half as long."""


def script_of(chunk_delay_s: float = CHUNK_DELAY_S) -> dict[str, Any]:
    """The scripted model's answers: the slow playbook's :data:`LONG`, ``sub_speak``'s
    :data:`SPOKEN`, the router's :data:`ROUTED`, else :data:`REPLY`; chunks
    ``chunk_delay_s`` apart."""
    return {
        "responses": {"slow.reply": [LONG] * 20, "sub_speak.compose": [SPOKEN] * 20,
                      "sub_router_user.decide": [ROUTED] * 20},
        "default": [REPLY] * 400,
        "chunk_delay_s": chunk_delay_s,
    }


@dataclass
class Server:
    """A running ``sea serve``."""

    url: str
    token: str
    process: subprocess.Popen[bytes]
    root: Path

    @property
    def headers(self) -> dict[str, str]:
        """The key header."""
        return {"x-api-key": self.token}

    def stop(self) -> None:
        """SIGTERM, then kill if it does not stop."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def serve_command(root: Path, *extra: str, script: dict[str, Any] | None = None
                  ) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a ``sea serve`` on a free port with its files (the
    test playbooks, the scripted model's answers) in ``root``."""
    books = root / "books"
    books.mkdir(parents=True, exist_ok=True)
    for playbook in (CHAT, SLOW, ASKING):
        (books / f"{playbook['name']}.json").write_bytes(orjson.dumps(playbook))
    (root / "script.json").write_bytes(orjson.dumps(script or script_of()))
    env = {**os.environ, "SEA_HOME": str(root / "home"), "PYTHONPATH": str(ROOT)}
    env.pop("SEA_DB", None)
    command = [sys.executable, "-m", "sea", "serve", "--port", "0",
               "--db", str(root / "memory.sqlite"), "--model", f"scripted:{root / 'script.json'}",
               "chat", "--playbooks", str(books),
               "--ask-before", "memory_recent", "--token-file", str(root / "token"), *extra]
    return command, env


def start_server(root: Path, *extra: str, script: dict[str, Any] | None = None) -> Server:
    """Start ``sea serve`` on a free port with its files in ``root``.

    Raises:
        RuntimeError: it did not say where it listens within 60 seconds.
    """
    command, env = serve_command(root, *extra, script=script)
    with open(root / "server.log", "wb") as log:  # the process keeps its own copy
        process = subprocess.Popen(command, cwd=root, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = (root / "server.log").read_text(errors="replace")
        found = re.search(r"listening on (http://\S+)", text)
        if found and (root / "token").exists() and "token" in text:
            return Server(found.group(1), (root / "token").read_text().strip(), process, root)
        if process.poll() is not None:
            raise RuntimeError(f"sea serve exited {process.returncode}:\n{text}")
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("sea serve did not start:\n" + (root / "server.log").read_text())
