"""Host node kinds that declare everything a kind can, each declared here and nothing in
``sea/`` edited: a pure kind runs in the graph step of the node before it as ``set`` does,
a kind that may pause for a person pauses its pulse (in a called playbook too) and resumes,
and a model's declarations (its answer's schema, the tools it names, the tags it writes,
its expressions, the playbooks it names, its streaming) take part in the checks and the
drawing as the built-in types' do.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.approval import require_approval
from sea.engine.compiler import Compiler
from sea.engine.events import NodeStarted
from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind, Registry
from sea.engine.state import PlaybookState, Update, assign, variables
from sea.engine.waits import NEVER, Waits
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.checks import CheckContext, Signature, ToolCatalogue
from sea.lang.loader import check_document
from sea.lang.node import (
    Defined,
    FallibleNode,
    NodeModel,
    PlaybookIndex,
    Read,
    Unknown,
    keys_defined,
    template_reads,
)
from sea.lang.render import to_mermaid
from sea.lang.templates import render
from sea.lang.uses import Answer, CalleeUse, ExpressionUse, TagUse, ToolUse
from sea.llm.models import ModelSet
from sea.nodes import builtin_registry

AIKO = Persona("aiko", "Aiko", "")


class StampNode(NodeModel):
    """Write a rendered text under a key (only the run's state: a pure kind)."""

    type: Literal["stamp"] = Field(description="Node type: stamp a text into the state.")
    key: str = Field(description="State key that receives the text.")
    text: str = Field(description="Template of the text.")

    mermaid_shape: ClassVar[tuple[str, str]] = ("[/", "\\]")

    def field_reads(self, base: str) -> Iterator[Read]:
        return template_reads(self.text, f"{base}/text", self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        return keys_defined(self.id, self.key)


class StampKind(NodeKind[StampNode]):
    model = StampNode
    pure = True

    def waits(self, node: StampNode) -> Waits:
        return NEVER

    async def run(self, node: StampNode, state: PlaybookState, frame: Frame) -> Update:
        return assign({node.key: render(node.text, variables(state))})


class ImpureStampKind(StampKind):
    """The same kind, not declared pure."""

    pure = False


class ConfirmNode(FallibleNode):
    """Ask a person to confirm, then record that they did."""

    type: Literal["confirm"] = Field(description="Node type: ask a person to confirm.")
    question: str = Field(description="Template of what the person is asked.")
    tags: list[str] = Field(default_factory=list, description="Tags of the confirmation.")

    def field_reads(self, base: str) -> Iterator[Read]:
        return template_reads(self.question, f"{base}/question", self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        return keys_defined(self.id, "confirmed")

    def tags_written(self) -> Iterator[TagUse]:
        for position, tag in enumerate(self.tags):
            yield TagUse(tag, ("tags", position))

    def detail(self) -> str | None:
        return "asks a person"


class ConfirmKind(NodeKind[ConfirmNode]):
    model = ConfirmNode

    def waits(self, node: ConfirmNode) -> Waits:
        return Waits(always=True)

    async def run(self, node: ConfirmNode, state: PlaybookState, frame: Frame) -> Update:
        question = render(node.question, variables(state))
        require_approval(frame, node.id, question, {"tags": node.tags})
        return assign({"confirmed": question})


class GradeNode(FallibleNode):
    """Ask a model for a grade in a schema, with tools, tags, a score and a reviewer."""

    type: Literal["grade"] = Field(description="Node type: grade with a model.")
    rubric: dict[str, Any] = Field(description="JSON Schema of the grade.")
    into: str = Field(description="State key that receives the grade.")
    helpers: list[str] = Field(default_factory=list, description="Tools the model may use.")
    labels: list[str] = Field(default_factory=list, description="Memory tags of the grade.")
    score: str = Field(default="=0", description="An expression of the score.")
    reviewer: str | None = Field(default=None, description="A playbook that reviews it.")
    live: bool = Field(default=False, description="Stream the grade to the host.")

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        return keys_defined(self.id, self.into)

    def offered_tools(self) -> list[str]:
        return list(self.helpers)

    def tools_named(self) -> Iterator[ToolUse]:
        for position, name in enumerate(self.helpers):
            yield ToolUse(name, ("helpers", position))

    def answer(self) -> Answer | None:
        return Answer(self.rubric, "rubric", self.into)

    def tags_written(self) -> Iterator[TagUse]:
        for position, tag in enumerate(self.labels):
            yield TagUse(tag, ("labels", position))

    def expressions(self) -> Iterator[ExpressionUse]:
        yield ExpressionUse(self.score.removeprefix("="), ("score",))

    def callees_named(self) -> Iterator[CalleeUse]:
        if self.reviewer is not None:
            yield CalleeUse(self.reviewer, ("reviewer",))

    def streams(self) -> bool:
        return self.live


class GradeKind(NodeKind[GradeNode]):
    model = GradeNode

    async def run(self, node: GradeNode, state: PlaybookState, frame: Frame) -> Update:
        return assign({node.into: {"level": "high"}})


REGISTRY = builtin_registry().with_kinds(StampKind(), ConfirmKind(), GradeKind())
TYPES = REGISTRY.node_types()

STAMPS: dict[str, Any] = {
    "name": "stamps", "description": "Stamps around a write.", "start_node": "a",
    "output_schema": ["first", "second"],
    "nodes": [
        {"id": "a", "type": "stamp", "key": "first", "text": "1:{input}", "next": "b"},
        {"id": "b", "type": "set", "assignments": {"second": "2:{first}"}, "next": "c"},
        {"id": "c", "type": "memorize", "action": "{second}", "role": "user"},
    ],
}

CONFIRM: dict[str, Any] = {
    "name": "confirm_launch", "description": "Asks before it launches.",
    "start_node": "ask", "output_schema": ["confirmed"],
    "nodes": [
        {"id": "ask", "type": "confirm", "question": "launch {input}?", "next": "done"},
        {"id": "done", "type": "say", "action": "launched: {confirmed}"},
    ],
}

CALLER: dict[str, Any] = {
    "name": "caller", "description": "Calls the confirmation.", "start_node": "call",
    "output_schema": ["confirmed"],
    "nodes": [{"id": "call", "type": "subplay", "playbook": "confirm_launch",
               "args": {"input": "{input}"}, "propagate_output": True}],
}


def _grade(**fields: Any) -> dict[str, Any]:
    node = {"id": "g", "type": "grade", "into": "grade", "next": "branch",
            "rubric": {"type": "object", "properties": {
                "level": {"type": "string", "enum": ["low", "high"]}}}}
    node.update(fields)
    return {
        "name": "grading", "description": "Grades and branches.", "start_node": "g",
        "nodes": [
            node,
            {"id": "branch", "type": "pass", "conditional_next": {
                "field": "grade.level", "cases": {"high": "yes"}, "default": "no"}},
            {"id": "yes", "type": "say", "action": "good"},
            {"id": "no", "type": "say", "action": "not yet"},
        ],
    }


class _Library:
    """Two playbooks the checks may look up."""

    def names(self) -> list[str]:
        return ["review"]

    def signature(self, name: str) -> Signature | None:
        return Signature(name) if name == "review" else None


def _codes(document: dict[str, Any], context: CheckContext | None = None) -> list[str]:
    result = check_document(json.dumps(document), types=TYPES, context=context)
    return [f"{d.code} {d.pointer}" for d in result.diagnostics]


def _runtime(tmp_path: Path, registry: Registry, *documents: dict[str, Any],
             saver: InMemorySaver | None = None) -> tuple[Runtime, SQLiteStore]:
    for document in documents:
        (tmp_path / f"{document['name']}.json").write_text(json.dumps(document))
    store = SQLiteStore(tmp_path / "memory.sqlite")
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                                    library=tmp_path, registry=registry, keep_checkpoints=True),
                      checkpointer=saver or InMemorySaver())
    return runtime, store


def _graph_steps(saver: InMemorySaver, pulse_id: str) -> set[str]:
    """The nodes that ran as graph steps of the pulse's top-level graph."""
    last = saver.get_tuple({"configurable": {"thread_id": pulse_id, "checkpoint_ns": ""}})
    assert last is not None
    return {name for name in last.checkpoint["versions_seen"] if not name.startswith("__")}


@pytest.mark.parametrize(("kind", "steps"), [
    (StampKind(), {"a"}),  # a pure stamp runs b and the write c in its step
    (ImpureStampKind(), {"a", "b"}),  # a step of its own; b's runs the write
])
def test_a_pure_kind_runs_its_successors_in_its_graph_step_as_set_does(
    tmp_path: Path, kind: NodeKind[Any], steps: set[str]
) -> None:
    saver = InMemorySaver()
    runtime, store = _runtime(tmp_path, builtin_registry().with_kinds(kind), STAMPS,
                              saver=saver)
    try:
        done = runtime.run_pulse(AIKO, "stamps", "x", pulse_id="p", recover=True)
    finally:
        runtime.close()
        store.close()
    assert done.status == "ok", done.error
    assert done.outputs == {"first": "1:x", "second": "2:1:x"}
    assert [e.node for e in done.events if isinstance(e, NodeStarted)] == ["a", "b", "c"]
    assert _graph_steps(saver, "p") == steps


@pytest.mark.parametrize("playbook", ["confirm_launch", "caller"])
def test_a_kind_that_may_wait_pauses_its_pulse_and_resumes(
    tmp_path: Path, playbook: str
) -> None:
    runtime, store = _runtime(tmp_path, REGISTRY, CONFIRM, CALLER)
    try:
        waiting = runtime.run_pulse(AIKO, playbook, "the probe")
        assert waiting.status == "waiting", waiting.error
        assert waiting.approval is not None
        assert waiting.approval["action"] == "launch the probe?"
        resumed = runtime.run_resume(waiting.pulse_id, "approve")
        assert resumed.status == "ok", resumed.error
        assert resumed.outputs == {"confirmed": "launch the probe?"}
        assert resumed.spoken == ["launched: launch the probe?"]
        refused = runtime.run_pulse(AIKO, playbook, "the rocket")
        denied = runtime.run_resume(refused.pulse_id, "deny")
        assert denied.status == "error"
        assert denied.error is not None and "was not approved" in denied.error["message"]
    finally:
        runtime.close()
        store.close()


def test_what_a_kind_declares_of_waiting_is_what_the_compiler_keeps() -> None:
    checked = check_document(json.dumps(CONFIRM), types=TYPES)
    assert checked.playbook is not None, checked.diagnostics
    assert Compiler(REGISTRY).compiled(checked.playbook, "h").waits == Waits(always=True)
    stamps = check_document(json.dumps(STAMPS), types=TYPES).playbook
    assert stamps is not None
    assert Compiler(REGISTRY).compiled(stamps, "s").waits == NEVER


def test_a_valid_document_with_every_declaration_has_no_findings() -> None:
    catalogue = ToolCatalogue({"lookup": None})
    context = CheckContext(library=_Library(), tools=catalogue)
    assert _codes(_grade(reviewer="review", score="=1 + 2"), context) == []
    assert _codes(CONFIRM) == []


def test_its_answer_schema_is_checked_and_types_the_cases_compared_with_it() -> None:
    bad = _grade(rubric={"type": "object", "properties": {
        "level": {"enum": ["low", "high"]}, "note": {"type": "strng"}}})
    assert _codes(bad) == ["SEA019 /nodes/0/rubric/properties/note/type"]
    never = _grade()
    never["nodes"][1]["conditional_next"]["cases"] = {"medium": "yes"}
    assert _codes(never) == ["SEA040 /nodes/1/conditional_next/cases/medium"]
    findings = check_document(json.dumps(never), types=TYPES).diagnostics
    assert "(rubric of grade node `g`)" in findings[0].message


def test_the_tools_it_names_are_checked_against_the_catalogue() -> None:
    context = CheckContext(tools=ToolCatalogue({"lookup": None}))
    with_tools = _grade(helpers=["lookup", "lokup"])
    codes = _codes(with_tools, context)
    assert "SEA060 /nodes/0/helpers/1" in codes  # an unknown tool
    assert "SEA036 /nodes/0/helpers" in codes  # a schema and tools on one node


def test_its_tags_expressions_and_callees_are_checked() -> None:
    assert _codes(_grade(labels=["ok", "pulse:forged"])) == ["SEA035 /nodes/0/labels/1"]
    assert _codes(_grade(score="=1 +")) == ["SEA032 /nodes/0/score"]
    confirm = json.loads(json.dumps(CONFIRM))
    confirm["nodes"][0]["tags"] = ["node:x"]
    assert _codes(confirm) == ["SEA035 /nodes/0/tags/0"]
    context = CheckContext(library=_Library())
    assert _codes(_grade(reviewer="reveiw"), context) == ["SEA050 /nodes/0/reviewer"]


def test_its_reads_and_writes_are_checked_and_it_is_drawn() -> None:
    unread = json.loads(json.dumps(CONFIRM))
    unread["nodes"][0]["question"] = "launch {nobody_set_this}?"
    assert _codes(unread) == ["SEA030 /nodes/0/question"]
    checked = check_document(json.dumps(STAMPS), types=TYPES).playbook
    assert checked is not None
    assert 'n0[/"a<br/>stamp"\\]' in to_mermaid(checked)
    confirm = check_document(json.dumps(CONFIRM), types=TYPES).playbook
    assert confirm is not None
    assert 'n0["ask<br/>confirm: asks a person"]' in to_mermaid(confirm)


def test_a_model_says_whether_it_streams() -> None:
    checked = check_document(json.dumps(_grade(live=True)), types=TYPES).playbook
    assert checked is not None
    assert [node.streams() for node in checked.nodes] == [True, False, False, False]


def test_a_kind_must_be_a_node_kind() -> None:
    class Plain:
        model = StampNode

        async def run(self, node: StampNode, state: PlaybookState, frame: Frame) -> Update:
            return {}

    with pytest.raises(UsageError, match="Plain is not a node kind: a host's kind subclasses"):
        builtin_registry().with_kinds(Plain())  # type: ignore[arg-type]
