"""A pulse killed inside a node, after the node wrote to memory: run as a process.

``python -m tests.workers.crash_node DIR PULSE_ID`` runs the ``note_twice`` playbook of
``DIR`` with ``recover=True`` on ``DIR/memory.sqlite``. Its ``note_then_die`` node writes a
note, then kills its own process (SIGKILL) the first time (``DIR/killed`` marks it).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update
from sea.host.config import RuntimeConfig
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.lang.node import FallibleNode
from sea.llm.models import ModelSet
from sea.nodes import builtin_registry

PERSONA = Persona("aoi", "Aoi", "You are Aoi.")


class NoteThenDie(FallibleNode):
    """Write a note, then die the first time."""

    type: Literal["note_then_die"] = Field(description="Node type: write a note, then die.")
    text: str = Field(description="The note.")


class NoteThenDieKind(NodeKind[NoteThenDie]):
    """Runs ``note_then_die``: the kill lands after the write, before the checkpoint."""

    model = NoteThenDie

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    async def run(self, node: NoteThenDie, state: PlaybookState, frame: Frame) -> Update:
        await frame.remember(node.id, "assistant", node.text, ("note",))
        if not self.marker.exists():
            self.marker.write_text("killed once")
            os.kill(os.getpid(), signal.SIGKILL)
        return {}


def write_playbook(directory: Path) -> None:
    """The ``note_twice`` playbook: a note that kills, then a memorize."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "note_twice.json").write_text(json.dumps({
        "name": "note_twice", "description": "Notes, dies once, notes again.",
        "start_node": "note",
        "nodes": [
            {"id": "note", "type": "note_then_die", "text": "first note", "next": "after"},
            {"id": "after", "type": "memorize", "role": "assistant", "action": "second note",
             "tags": ["note"]},
        ],
    }))


def runtime(directory: Path) -> tuple[Runtime, SQLiteStore]:
    """The runtime both processes use: store and checkpoints in ``directory``."""
    store = SQLiteStore(directory / "memory.sqlite")
    registry = builtin_registry().with_kinds(NoteThenDieKind(directory / "killed"))
    made = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                   library=[str(directory)], registry=registry,
                   checkpoint_path=directory / "checkpoints.sqlite", keep_checkpoints=True))
    return made, store


def run(directory: Path, pulse_id: str) -> PulseResult:
    """Run (or continue) the pulse."""
    made, store = runtime(directory)
    try:
        return asyncio.run(made.arun_pulse(PERSONA, "note_twice", "go", pulse_id=pulse_id,
                                           recover=True))
    finally:
        made.close()
        store.close()


def main(argv: list[str]) -> Any:
    """Entry point: DIR PULSE_ID."""
    result = run(Path(argv[0]), argv[1])
    print(result.status, "" if result.error is None else result.error)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
