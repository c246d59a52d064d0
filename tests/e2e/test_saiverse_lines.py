"""SAIVerse's ``line_role`` and ``scope`` on ``memorize`` and on an ``llm`` node's
``memorize``, on both backends (``tests/data/saiverse_lines``): stored with each message, a
pulse sees all of its own, a later pulse only the main line's committed conversation, and a
volatile message is gone from the store once its pulse ends."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from saimemory.records import NewMessage
from saimemory.sqlbase import SqlStore
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.e2e.conftest import LINES, PERSONA, contents, request_of

FIRST = "My cat is called Tama."


@pytest.fixture
def runtime(backend: SqlStore, tmp_path: Path) -> Iterator[Runtime]:
    model = ScriptedChatModel(responses={
        "lines_demo.aside": ["aside: maybe ask about the cat", "aside again"],
        "lines_demo.answer": ["Tama is a fine name.", "Yes, we talked about Tama."],
    })
    made = Runtime(RuntimeConfig(
        backend, ModelSet(normal=model, lightweight=model),
        library=PlaybookLibrary.bundled([LINES]),
        checkpoint_path=tmp_path / "checkpoints.sqlite",
    ))
    yield made
    made.close()


def test_lines_and_scopes_are_stored_read_and_dropped(
    runtime: Runtime, backend: SqlStore
) -> None:
    first = runtime.run_pulse(PERSONA, "lines_demo", FIRST)
    assert first.status == "ok", first.error
    # the pulse sees everything it wrote itself, whatever its line and scope
    seen = contents(request_of(first, "lines_demo", "answer"))
    for text in ("aside: maybe ask about the cat", f"judged: worth an answer ({FIRST})",
                 f"scratch: {FIRST}"):
        assert text in seen
    kept = {m.content: (m.line_role, m.line_scope)
            for m in backend.pulse_messages(PERSONA.id, first.pulse_id)}
    assert kept["aside: maybe ask about the cat"] == ("sub_line", "committed")
    assert kept[f"judged: worth an answer ({FIRST})"] == ("meta_judgment", "discardable")
    assert kept["Tama is a fine name."] == ("main_line", "committed")
    assert kept[FIRST] == ("main_line", "committed")  # the user's input
    # volatile: deleted when the pulse ended, not merely left out of later prompts
    assert f"scratch: {FIRST}" not in kept
    assert f"scratch: {FIRST}" not in [m.content for m in backend.recent(PERSONA.id, limit=50)]

    second = runtime.run_pulse(PERSONA, "lines_demo", "Do you remember my cat?")
    assert second.status == "ok", second.error
    later = contents(request_of(second, "lines_demo", "answer"))
    assert FIRST in later and "Tama is a fine name." in later
    assert "aside: maybe ask about the cat" not in later  # sub line
    assert f"judged: worth an answer ({FIRST})" not in later  # discardable
    assert f"scratch: {FIRST}" not in later  # volatile, and gone
    # this pulse's own, whatever their line and scope
    assert "aside again" in later and "scratch: Do you remember my cat?" in later


def test_a_bad_line_or_scope_is_located(tmp_path: Path) -> None:
    document = json.loads((LINES / "lines_demo.json").read_text(encoding="utf-8"))
    document["nodes"][1]["scope"] = "forever"
    document["nodes"][0]["memorize"]["line_role"] = "side"
    (tmp_path / "lines_demo.json").write_text(json.dumps(document), encoding="utf-8")
    errors = PlaybookLibrary([tmp_path]).check("lines_demo").errors
    where = {d.pointer for d in errors}
    assert "/nodes/1/scope" in where and "/nodes/0/memorize/line_role" in where, \
        [d.format_human() for d in errors]
    shown = " ".join(d.format_human() for d in errors)
    assert "committed" in shown and "main_line" in shown  # the values allowed are named


def test_the_playbook_validates_without_errors() -> None:
    result = PlaybookLibrary([LINES]).check("lines_demo")
    assert result.errors == [], [d.format_human() for d in result.errors]


def _note_only(tmp_path: Path) -> Path:
    """A playbook that writes one committed message and no volatile one."""
    folder = tmp_path / "note_only"
    folder.mkdir()
    (folder / "note_only.json").write_text(json.dumps({
        "name": "note_only", "description": "Keeps a note.",
        "input_schema": [{"name": "input", "description": "What the user said"}],
        "start_node": "keep",
        "nodes": [{"id": "keep", "type": "memorize", "role": "assistant",
                   "tags": ["conversation"], "action": "note: {input}", "next": None}],
    }), encoding="utf-8")
    return folder


@pytest.mark.parametrize("recover", [True, False])
def test_volatile_messages_of_an_earlier_drive_are_dropped(
    backend: SqlStore, tmp_path: Path, recover: bool
) -> None:
    """A pulse that writes no volatile message itself still deletes those an earlier drive
    of it left (its process died before the pulse ended); one that starts anew with a new
    id and writes one deletes it too."""
    model = ScriptedChatModel(responses={
        "lines_demo.aside": ["aside"], "lines_demo.answer": ["answer"]})
    runtime = Runtime(RuntimeConfig(
        backend, ModelSet(normal=model, lightweight=model),
        library=PlaybookLibrary.bundled([LINES, _note_only(tmp_path)]),
        checkpoint_path=tmp_path / "checkpoints.sqlite"))
    try:
        pulse_id = "p-left-over"
        backend.append(NewMessage(PERSONA.id, "assistant", "left over", pulse_id=pulse_id,
                                  line_scope="volatile"))
        ended = runtime.run_pulse(PERSONA, "note_only", "hello", pulse_id=pulse_id,
                                  recover=recover)
        assert ended.status == "ok", ended.error
        kept = [m.content for m in backend.pulse_messages(PERSONA.id, pulse_id)]
        assert "note: hello" in kept and "left over" not in kept
        fresh = runtime.run_pulse(PERSONA, "lines_demo", "again", recover=recover)
        assert fresh.status == "ok", fresh.error
        kept = [m.content for m in backend.pulse_messages(PERSONA.id, fresh.pulse_id)]
        assert "answer" in kept and "scratch: again" not in kept
    finally:
        runtime.close()
