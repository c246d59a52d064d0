"""SAIVerse's ``response_schema_source`` on an ``llm`` node: the answer's schema from a
registered tool's arguments (``tool:NAME``, ``spell:NAME``) or from a variable
(``state:KEY``), rendered as a template first; an answer that does not fit it is asked
again; a source that gives no schema fails the node, located; with ``response_schema``
too, the source is ignored with a warning (SEA064)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.e2e.conftest import PERSONA

MOOD = {"type": "object", "properties": {"mood": {"type": "string"}}, "required": ["mood"]}


class _Propose(BaseModel):
    goal: str = Field(description="What the plan should achieve.")


def _propose(goal: str) -> str:
    return goal


TOOLS: list[BaseTool] = [StructuredTool.from_function(
    _propose, name="plan_propose", args_schema=_Propose, description="Propose a plan.")]

SHAPED = {
    "name": "shaped",
    "description": "Answers in a schema taken from a tool or from a variable.",
    "input_schema": [
        {"name": "input", "description": "What the user said"},
        {"name": "tool_name", "description": "The tool whose arguments to fill"},
        {"name": "shape", "description": "A JSON Schema"},
    ],
    "start_node": "fill",
    "nodes": [
        {"id": "fill", "type": "llm", "action": "Fill the arguments for: {input}",
         "response_schema_source": "spell:{tool_name}", "output_key": "filled",
         "next": "mood"},
        {"id": "mood", "type": "llm", "action": "How does this feel: {input}",
         "response_schema_source": "state:shape", "output_key": "felt", "next": None},
    ],
    "output_schema": ["filled", "felt"],
}


def write(directory: Path, document: dict[str, Any]) -> Path:
    directory.mkdir(exist_ok=True)
    (directory / f"{document['name']}.json").write_text(json.dumps(document), encoding="utf-8")
    return directory


@pytest.fixture
def runtime_for(store: SQLiteStore, tmp_path: Path) -> Iterator[Any]:
    made: list[Runtime] = []

    def build(responses: dict[str, list[Any]]) -> tuple[Runtime, ScriptedChatModel]:
        model = ScriptedChatModel(responses=responses)
        runtime = Runtime(RuntimeConfig(
            store, ModelSet.single(model), tools=TOOLS,
            library=PlaybookLibrary.bundled([write(tmp_path / "books", SHAPED)]),
            checkpoint_path=tmp_path / f"checkpoints{len(made)}.sqlite",
        ))
        made.append(runtime)
        return runtime, model

    yield build
    for runtime in made:
        runtime.close()


def test_the_schema_comes_from_a_tool_and_from_a_variable(runtime_for: Any) -> None:
    runtime, model = runtime_for({
        "shaped.fill": [{"target": "tidy"}, {"goal": "tidy the desk"}],
        "shaped.mood": [{"feeling": "calm"}, {"mood": "calm"}],
    })
    result = runtime.run_pulse(PERSONA, "shaped", "tidy up",
                               args={"tool_name": "plan_propose", "shape": MOOD})
    assert result.status == "ok", result.error
    assert result.outputs["filled"] == {"goal": "tidy the desk"}
    assert result.outputs["felt"] == {"mood": "calm"}
    # each first answer broke its schema and was asked again
    assert [c.key for c in model.calls].count("shaped.fill") == 2
    assert [c.key for c in model.calls].count("shaped.mood") == 2


def test_a_source_without_a_schema_fails_the_node(runtime_for: Any) -> None:
    runtime, _ = runtime_for({"shaped.fill": [{"goal": "tidy"}]})
    result = runtime.run_pulse(PERSONA, "shaped", "tidy up",
                               args={"tool_name": "plan_propose", "shape": "not a schema"})
    assert result.status == "error"
    assert result.error["code"] == "SEA550" and result.error["node"] == "mood"
    assert "state:shape" in result.error["message"]


def test_the_checks_warn_when_response_schema_is_given_too(tmp_path: Path) -> None:
    document = json.loads(json.dumps(SHAPED))
    document["nodes"][1]["response_schema"] = MOOD
    errors_and_warnings = PlaybookLibrary([write(tmp_path, document)]).check("shaped")
    assert errors_and_warnings.errors == []
    found = [(d.code, d.pointer) for d in errors_and_warnings.diagnostics]
    assert ("SEA064", "/nodes/1/response_schema_source") in found


def test_an_unknown_kind_of_source_is_located(tmp_path: Path) -> None:
    document = json.loads(json.dumps(SHAPED))
    document["nodes"][0]["response_schema_source"] = "schema_of_plan_propose"
    errors = PlaybookLibrary([write(tmp_path, document)]).check("shaped").errors
    assert [(d.code, d.pointer) for d in errors] == [
        ("SEA015", "/nodes/0/response_schema_source")], [d.format_human() for d in errors]
