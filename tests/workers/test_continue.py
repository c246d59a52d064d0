"""Continuing a pulse from its last checkpoint: after a cancel, after a kill inside a node."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from saimemory import Persona
from saimemory.records import CONVERSATION_TAG, NewMessage
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import TokenChunk
from sea.engine.pulse import write_uid
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.workers.conftest import chat_script
from tests.workers.crash_node import PERSONA, write_callee_playbooks, write_playbook

AOI = Persona("aoi", "Aoi", "You are Aoi.")
HELLO = "Do you remember my cat?"  # the router asks its model (two candidates)


def _runtime(store: SQLiteStore, tmp_path: Path, **kwargs: Any) -> tuple[Runtime, Any]:
    script = json.loads(chat_script(tmp_path / "s.json", 3, delay=0.05).read_text())
    model = ScriptedChatModel.from_mapping(script)
    made = Runtime(RuntimeConfig(store, ModelSet.single(model), library=PlaybookLibrary.bundled([]),
                   checkpoint_path=tmp_path / "checkpoints.sqlite", keep_checkpoints=True,
                   **kwargs))
    return made, model


def test_a_stopped_pulse_goes_on_from_its_last_checkpoint(store: SQLiteStore,
                                                         tmp_path: Path) -> None:
    """Stopped while the persona speaks: started again with recover=True, the router's
    finished call is not made again, and input and reply are stored once."""
    runtime, model = _runtime(store, tmp_path)

    async def stop_at_first_token() -> None:
        stream = runtime.astream_pulse(AOI, "meta_user", HELLO, pulse_id="p1", recover=True)
        async for event in stream:
            if isinstance(event, TokenChunk):
                break
        await stream.aclose()

    try:
        asyncio.run(stop_at_first_token())
        assert [m.role for m in store.pulse_messages("aoi", "p1")] == ["user"]
        result = asyncio.run(runtime.arun_pulse(AOI, "meta_user", HELLO, pulse_id="p1",
                                                recover=True))
        again = runtime.run_continue("p1")  # it ended: its end again, nothing re-run
    finally:
        runtime.close()
    assert result.status == "ok", result.error
    assert result.spoken == ["Glad to hear from you."] == again.spoken
    keys = [call.key for call in model.calls]
    assert keys == ["sub_router_user.decide", "sub_speak.compose", "sub_speak.compose"]
    stored = store.pulse_messages("aoi", "p1")
    assert [(m.role, m.content) for m in stored] == [
        ("user", HELLO), ("assistant", "Glad to hear from you.")]
    assert stored[0].uid == write_uid("p1", "input")


def test_an_input_stored_before_a_crash_is_not_stored_again(store: SQLiteStore,
                                                            tmp_path: Path) -> None:
    """The process died after the input was written but before the first checkpoint."""
    store.append(NewMessage("aoi", "user", HELLO, tags=(CONVERSATION_TAG,), pulse_id="p2",
                            uid=write_uid("p2", "input")))
    runtime, _ = _runtime(store, tmp_path)
    try:
        result = runtime.run_pulse(AOI, "meta_user", HELLO, pulse_id="p2", recover=True)
    finally:
        runtime.close()
    assert result.status == "ok", result.error
    assert [m.role for m in store.pulse_messages("aoi", "p2")] == ["user", "assistant"]


def test_continue_needs_checkpoints(store: SQLiteStore, tmp_path: Path) -> None:
    runtime, _ = _runtime(store, tmp_path)
    try:
        result = runtime.run_continue("nowhere")
        runtime.forget("nowhere")  # nothing to remove: no error
    finally:
        runtime.close()
    assert result.status == "error" and result.error is not None
    assert result.error["code"] == "SEA300" and "one to continue" in result.error["message"]


def test_a_pulse_killed_inside_a_node_writes_nothing_twice(tmp_path: Path) -> None:
    """SIGKILL after a node wrote to memory and before its checkpoint: the node runs
    again when the pulse goes on, and its write is recognised by its uid."""
    write_playbook(tmp_path)
    root = Path(__file__).parents[2]
    killed = subprocess.run([sys.executable, "-m", "tests.workers.crash_node", str(tmp_path),
                             "p3"], cwd=root, capture_output=True, text=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    store = SQLiteStore(tmp_path / "memory.sqlite")
    try:
        assert [m.content for m in store.pulse_messages(PERSONA.id, "p3")] == [
            "go", "first note"]
        done = subprocess.run([sys.executable, "-m", "tests.workers.crash_node",
                               str(tmp_path), "p3"], cwd=root, capture_output=True,
                              text=True, timeout=60)
        assert done.stdout.strip() == "ok", (done.stdout, done.stderr)
        contents = [m.content for m in store.pulse_messages(PERSONA.id, "p3")]
    finally:
        store.close()
    assert contents == ["go", "first note", "second note"]


def test_a_process_killed_inside_a_callee_does_not_make_its_kept_model_call_again(
    tmp_path: Path
) -> None:
    """SIGKILL inside a called playbook that runs in its caller's step, after its first
    model call's run was kept: the next process goes on with that call's answer (the first
    process's) and makes only the second call; the note is stored once."""
    write_callee_playbooks(tmp_path)
    root = Path(__file__).parents[2]

    def process(tag: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tests.workers.crash_node", str(tmp_path),
                               "p4", "calls_talk_note_talk", tag], cwd=root,
                              capture_output=True, text=True, timeout=60)

    killed = process("first")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    done = process("second")
    assert done.stdout.strip() == "ok", (done.stdout, done.stderr)
    store = SQLiteStore(tmp_path / "memory.sqlite")
    try:
        contents = [m.content for m in store.pulse_messages(PERSONA.id, "p4")]
    finally:
        store.close()
    assert contents == ["go", "a note", "then first one, second two"]


class _DyingSaver(InMemorySaver):
    """Checkpoints in memory that stop being written, as a killed process stops writing
    them, at the ``die_at``-th checkpoint: that write never returns (the pulse is stuck
    there until cancelled) and nothing after it is kept."""

    def __init__(self, die_at: int) -> None:
        super().__init__()
        self.die_at = die_at
        self.puts = 0
        self.died = asyncio.Event()

    async def _dies(self) -> bool:
        """Count a write: True when the process is gone already (nothing is written); at
        the ``die_at``-th, it goes (the write never returns)."""
        self.puts += 1
        if self.died.is_set():
            return True
        if self.puts >= self.die_at:
            self.died.set()
            await asyncio.Event().wait()  # the process is gone
        return False

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, versions: Any) -> Any:
        if await self._dies():
            return config
        return await super().aput(config, checkpoint, metadata, versions)

    async def aput_writes(self, config: Any, writes: Any, task_id: str,
                          task_path: str = "") -> None:
        if not self.died.is_set():
            await super().aput_writes(config, writes, task_id, task_path)

    def revive(self) -> None:
        """What the next process finds: the checkpoints written before the death."""
        self.died = asyncio.Event()
        self.die_at = 10**9


class _Watching(_DyingSaver):
    """Checkpoints that are all written, each noting how many model calls came before it."""

    def __init__(self, model: ScriptedChatModel) -> None:
        super().__init__(10**9)
        self.model = model
        self.made: list[int] = []

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, versions: Any) -> Any:
        self.made.append(len(self.model.calls))
        return await super().aput(config, checkpoint, metadata, versions)


async def _killed(runtime: Runtime, saver: Any, pulse_id: str, playbook: str = "meta_user",
                  text: str = HELLO, persona: Persona = AOI) -> None:
    """Start the pulse; once ``saver`` says it died (its ``died`` event: its checkpoints
    stop being written), cancel it (the process is gone)."""
    task = asyncio.ensure_future(runtime.arun_pulse(persona, playbook, text,
                                                    pulse_id=pulse_id, recover=True))
    died = asyncio.ensure_future(saver.died.wait())
    done, _ = await asyncio.wait([task, died], return_when=asyncio.FIRST_COMPLETED)
    died.cancel()
    if task not in done:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def test_a_pulse_dead_between_a_steps_writes_and_its_checkpoint_goes_on(
    store: SQLiteStore, tmp_path: Path
) -> None:
    """Killed after a step's task writes were saved and before the checkpoint after them
    (LangGraph then shows no next node): going on finishes the pulse, wherever that was."""
    script = json.loads(chat_script(tmp_path / "s.json", 200).read_text())
    model = ScriptedChatModel.from_mapping(script)
    whole = _Watching(model)  # the checkpoints the pulse writes when nothing dies
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(model),
                                    library=PlaybookLibrary.bundled([]),
                                    keep_checkpoints=True), checkpointer=whole)
    try:
        assert runtime.run_pulse(AOI, "meta_user", HELLO, pulse_id="d0",
                                 recover=True).status == "ok"
    finally:
        runtime.close()
    asked = [call.key for call in model.calls]  # the model calls of one pulse, in order
    assert asked == ["sub_router_user.decide", "sub_speak.compose"], asked
    died_somewhere = 0
    for die_at in range(1, whole.puts + 2):
        saver = _DyingSaver(die_at)
        model = ScriptedChatModel.from_mapping(script)
        runtime = Runtime(RuntimeConfig(store, ModelSet.single(model),
                                        library=PlaybookLibrary.bundled([]),
                                        keep_checkpoints=True), checkpointer=saver)
        pulse_id = f"d{die_at}"

        try:
            asyncio.run(_killed(runtime, saver, pulse_id))
            if saver.died.is_set():
                died_somewhere += 1
            saver.revive()
            result = asyncio.run(runtime.arun_pulse(AOI, "meta_user", HELLO,
                                                    pulse_id=pulse_id, recover=True))
        finally:
            runtime.close()
        assert result.status == "ok", (die_at, result.error)
        stored = [(m.role, m.content) for m in store.pulse_messages("aoi", pulse_id)]
        assert stored == [("user", HELLO), ("assistant", "Glad to hear from you.")], die_at
        # a model call is made again only when the checkpoint of its own step was lost
        again = Counter(call.key for call in model.calls) - Counter(asked)
        lost = Counter(asked[(whole.made[die_at - 2] if die_at > 1 else 0):
                             whole.made[die_at - 1]] if die_at <= whole.puts else [])
        assert again <= lost, (die_at, again, lost)
    assert died_somewhere == whole.puts >= 2  # at each checkpoint of the pulse
