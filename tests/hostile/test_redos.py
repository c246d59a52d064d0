"""No pattern in a schema can freeze the host: ``pattern`` and ``patternProperties`` of response
schemas and tool argument schemas run on RE2 (linear time), a pattern RE2 cannot run is a
located diagnostic of ``sea validate``, and so are an invalid regex and a ``$ref`` that does not
resolve.

Before, ``"^(a+)+$"`` against thirty ``a`` and a ``!`` took Python's ``re`` about a minute per
validation, holding the GIL: every other pulse of the process stopped with it. The timing
bounds below are generous (a minute); what they catch is a validation that takes minutes.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from langchain_core.tools import tool
from pydantic import BaseModel, Field

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.lang import codes
from sea.lang.loader import check_document
from sea.llm.models import ModelSet
from sea.llm.structured import check_schema, validation_problem

EVIL = "^(a+)+$"
"""Catastrophic backtracking in a backtracking engine: nested quantifiers."""
HOSTILE = "a" * 30 + "!"
"""About a minute of Python's ``re`` per match attempt; RE2 answers at once."""
BOUND_S = 60.0
"""Generous: the old engine took minutes, RE2 takes milliseconds."""

T = TypeVar("T")


def within(seconds: float, work: Callable[[], T]) -> T:
    """Run ``work`` in a thread; fail unless it is done within ``seconds``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    took = time.monotonic() - started
    assert not thread.is_alive() and took < seconds, f"still working after {took:.0f} s"
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


SCHEMA = {
    "type": "object",
    "properties": {"word": {"type": "string", "pattern": EVIL}},
    "required": ["word"],
}
GUARDED = {
    "name": "guarded",
    "description": "Asks the model for a word that must match a pattern.",
    "start_node": "ask",
    "nodes": [
        {"id": "ask", "type": "llm", "action": "Say a word.", "context_profile": "worker",
         "response_schema": SCHEMA, "output_key": "answer"},
    ],
}
CALM = {
    "name": "calm",
    "description": "Asks the model a plain structured question.",
    "start_node": "ask",
    "nodes": [
        {"id": "ask", "type": "llm", "action": "Are you there?", "context_profile": "worker",
         "response_schema": {"type": "object", "properties": {"ok": {"type": "boolean"}},
                             "required": ["ok"]},
         "output_key": "answer"},
    ],
}


@pytest.fixture
def books(tmp_path: Path) -> Path:
    folder = tmp_path / "books"
    folder.mkdir()
    for playbook in (GUARDED, CALM):
        (folder / f"{playbook['name']}.json").write_text(json.dumps(playbook), encoding="utf-8")
    return folder


@pytest.fixture
def runtime(store: SQLiteStore, books: Path, tmp_path: Path) -> Iterator[Runtime]:
    model = ScriptedChatModel.from_mapping({"responses": {
        "guarded.ask": [{"word": HOSTILE}] * 3,  # the first answer and both retries
        "calm.ask": [{"ok": True}],
    }})
    with Runtime(RuntimeConfig(store, ModelSet.single(model), library=[books],
                 checkpoint_path=tmp_path / "checkpoints.sqlite")) as made:
        yield made


def test_a_model_answer_against_a_backtracking_pattern_is_judged_at_once(
    runtime: Runtime, persona: Persona
) -> None:
    result = within(BOUND_S, lambda: runtime.run_pulse(persona, "guarded", "go"))
    assert result.status == "error"
    assert result.error is not None
    assert result.error["code"] == "SEA521"  # the answer did not match response_schema
    assert EVIL in result.error["message"] and HOSTILE in result.error["message"]


def test_a_hostile_pulse_does_not_stop_a_normal_one_beside_it(
    runtime: Runtime, persona: Persona
) -> None:
    async def both() -> list[PulseResult]:
        return list(await asyncio.gather(
            runtime.arun_pulse(persona, "guarded", "go"),
            runtime.arun_pulse(persona, "calm", "go"),
        ))

    hostile, normal = within(BOUND_S, lambda: asyncio.run(both()))
    assert normal.status == "ok" and normal.outputs["answer"] == {"ok": True}
    assert hostile.status == "error" and hostile.error is not None
    assert EVIL in hostile.error["message"]


def test_pattern_properties_and_additional_properties_run_on_the_linear_engine() -> None:
    schema = {"type": "object", "patternProperties": {EVIL: {"type": "integer"}},
              "additionalProperties": False}
    problem = within(BOUND_S, lambda: validation_problem(schema, {"a" * 32 + "!": 1}))
    assert problem is not None and EVIL in problem


def test_unevaluated_properties_match_pattern_properties_on_the_linear_engine() -> None:
    schema = {"type": "object", "allOf": [{"patternProperties": {EVIL: True}}],
              "unevaluatedProperties": False}
    problem = within(BOUND_S, lambda: validation_problem(schema, {"a" * 32 + "!": 1}))
    assert problem is not None and "Unevaluated" in problem
    assert validation_problem(schema, {"aaaa": 1}) is None


class ShoutArgs(BaseModel):
    """A word of a's."""

    word: str = Field(pattern=EVIL, description="The word to shout.")


@tool(args_schema=ShoutArgs)
def shout(word: str) -> str:
    """Shout a word."""
    return word.upper()


def test_a_tool_argument_against_a_backtracking_pattern_is_judged_at_once(
    store: SQLiteStore, persona: Persona, tmp_path: Path
) -> None:
    books = tmp_path / "tool_books"
    books.mkdir()
    (books / "loud.json").write_text(json.dumps({
        "name": "loud", "description": "Shouts the input.", "start_node": "call",
        "nodes": [{"id": "call", "type": "tool", "action": "shout",
                   "args": {"word": "{input}"}, "output_key": "loud"}],
    }), encoding="utf-8")
    model = ModelSet.single(ScriptedChatModel.from_mapping({}))
    with Runtime(RuntimeConfig(store, model, tools=[shout], library=[books],
                 checkpoint_path=tmp_path / "checkpoints.sqlite")) as runtime:
        result = within(BOUND_S, lambda: runtime.run_pulse(persona, "loud", "a" * 32 + "!"))
        assert result.status == "error" and result.error is not None
        assert result.error["code"] == "SEA531" and EVIL in result.error["message"]
        assert runtime.run_pulse(persona, "loud", "aaaa").outputs["loud"] == "AAAA"


def _schema_playbook(schema: dict[str, Any]) -> str:
    return json.dumps({
        "name": "asks", "description": "Asks for a structured answer.", "start_node": "ask",
        "nodes": [{"id": "ask", "type": "llm", "action": "Answer.",
                   "response_schema": schema, "output_key": "answer"}],
    }, indent=2)


def test_a_pattern_the_linear_engine_cannot_run_is_a_located_diagnostic() -> None:
    schema = {"type": "object", "properties": {
        "twice": {"type": "string", "pattern": "^(ab)\\1$"},
        "ahead": {"type": "string", "pattern": "^(?=x)x+$"},
    }, "patternProperties": {"(?<!y)z": {"type": "string"}}}
    found = check_document(_schema_playbook(schema), file="asks.json").diagnostics
    unsupported = [d for d in found if d.code == codes.UNSUPPORTED_PATTERN]
    assert [d.pointer for d in unsupported] == [  # in source order
        "/nodes/0/response_schema/properties/twice/pattern",
        "/nodes/0/response_schema/properties/ahead/pattern",
        "/nodes/0/response_schema/patternProperties/(?<!y)z",
    ]
    assert all(d.line is not None and d.column is not None for d in unsupported)
    assert all(d.hint and "RE2" in d.hint and "lookaround" in d.hint for d in unsupported)
    assert "^(ab)\\1$" in unsupported[0].message
    # the call path refuses it too, before any model is asked
    problem = check_schema(schema)
    assert problem is not None and "RE2" in problem


def test_an_invalid_regex_and_an_unresolved_ref_are_found_by_validation() -> None:
    schema = {"type": "object", "properties": {
        "broken": {"type": "string", "pattern": "([a-z]"},
        "elsewhere": {"$ref": "#/$defs/missing"},
        "remote": {"$ref": "https://example.invalid/schema.json"},
    }, "$defs": {"present": {"type": "string"}}}
    found = check_document(_schema_playbook(schema), file="asks.json").diagnostics
    bad = {d.pointer: d for d in found if d.code == codes.BAD_RESPONSE_SCHEMA}
    base = "/nodes/0/response_schema/properties"
    assert set(bad) == {f"{base}/broken/pattern", f"{base}/elsewhere/$ref",
                        f"{base}/remote/$ref"}
    assert "not a valid regular expression" in bad[f"{base}/broken/pattern"].message
    assert "does not resolve" in bad[f"{base}/elsewhere/$ref"].message
    assert "remote references are not fetched" in bad[f"{base}/remote/$ref"].message
    assert all(d.line is not None for d in bad.values())
    # a schema with a $ref that resolves is fine
    fine = {"type": "object", "properties": {"p": {"$ref": "#/$defs/present"}},
            "$defs": {"present": {"type": "string", "pattern": "^[a-z]+$"}}}
    assert check_document(_schema_playbook(fine), file="asks.json").errors == []
