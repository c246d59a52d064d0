"""A pulse killed inside a node, after the node wrote to memory: run as a process.

``python -m tests.workers.crash_node DIR PULSE_ID [PLAYBOOK [TAG]]`` runs ``note_twice``
(or ``PLAYBOOK``) of ``DIR`` with ``recover=True`` on ``DIR/memory.sqlite``. Its
``note_then_die`` node writes a note, then kills its own process (SIGKILL) the first time
(``DIR/killed`` marks it). The model answers each call with the call's name after ``TAG``
(``TAG one`` for ``talk_note_talk.a``), so what a later process stores tells which
process made a call.
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
from sea.engine.waits import NEVER, Waits
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

    def waits(self, node: NoteThenDie) -> Waits:
        """It never asks a person (so a playbook of it can run in its caller's step)."""
        return NEVER

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


def write_callee_playbooks(directory: Path) -> None:
    """``calls_talk_note_talk``: a call of ``talk_note_talk`` (a model call, a note that
    kills, a model call), then a write of both answers."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "talk_note_talk.json").write_text(json.dumps({
        "name": "talk_note_talk", "description": "Talks, notes and dies once, talks again.",
        "output_schema": ["first", "second"], "start_node": "a",
        "nodes": [
            {"id": "a", "type": "llm", "action": "First: {input}", "context_profile": "worker",
             "output_key": "first", "next": "note"},
            {"id": "note", "type": "note_then_die", "text": "a note", "next": "c"},
            {"id": "c", "type": "llm", "action": "Second: {first}", "context_profile": "worker",
             "output_key": "second"},
        ],
    }))
    (directory / "calls_talk_note_talk.json").write_text(json.dumps({
        "name": "calls_talk_note_talk", "description": "Calls, then writes.",
        "start_node": "talk",
        "nodes": [
            {"id": "talk", "type": "subplay", "playbook": "talk_note_talk", "next": "after"},
            {"id": "after", "type": "memorize", "action": "then {first}, {second}",
             "role": "user"},
        ],
    }))


def runtime(directory: Path, tag: str = "") -> tuple[Runtime, SQLiteStore]:
    """The runtime both processes use: store and checkpoints in ``directory``."""
    store = SQLiteStore(directory / "memory.sqlite")
    registry = builtin_registry().with_kinds(NoteThenDieKind(directory / "killed"))
    script = {"responses": {"talk_note_talk.a": [f"{tag} one"],
                            "talk_note_talk.c": [f"{tag} two"]}}
    made = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping(script)),
                   library=[str(directory)], registry=registry,
                   checkpoint_path=directory / "checkpoints.sqlite", keep_checkpoints=True))
    return made, store


def run(directory: Path, pulse_id: str, playbook: str = "note_twice", tag: str = ""
        ) -> PulseResult:
    """Run (or continue) the pulse."""
    made, store = runtime(directory, tag)
    try:
        return asyncio.run(made.arun_pulse(PERSONA, playbook, "go", pulse_id=pulse_id,
                                           recover=True))
    finally:
        made.close()
        store.close()


def main(argv: list[str]) -> Any:
    """Entry point: DIR PULSE_ID [PLAYBOOK [TAG]]."""
    result = run(Path(argv[0]), argv[1], *argv[2:4])
    print(result.status, "" if result.error is None else result.error)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
