"""A node type added by a host: one class and one kind, declared here, and nothing else edited.

The ``shout`` type below is validated (its own fields and `error_next` rules), checked (the
variables it reads and defines take part in the dataflow checks), drawn (its own shape and
detail) and run (by the runtime, failures routed by `error_next`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar, Literal

import pytest
from pydantic import Field

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update, assign, variables
from sea.errors import NodeFailed, UsageError
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.loader import check_document
from sea.lang.node import (
    Defined,
    FallibleNode,
    PlaybookIndex,
    Read,
    Unknown,
    keys_defined,
    template_reads,
)
from sea.lang.render import to_mermaid
from sea.lang.templates import render
from sea.lang.vocabulary import BUILTIN_NODE_TYPES
from sea.llm.models import ModelSet
from sea.nodes import builtin_registry


class ShoutNode(FallibleNode):
    """Upper-case a text and store it."""

    mermaid_shape: ClassVar[tuple[str, str]] = ("[\\", "/]")
    known_mistakes: ClassVar[Mapping[str, str]] = {"message": "the text to shout is `text`"}

    type: Literal["shout"] = Field(description="Node type: shout a text.")
    text: str = Field(description="Template of the text to shout.")
    output_key: str = Field(description="State key that receives the shout.")

    def field_reads(self, base: str) -> Iterator[Read]:
        return template_reads(self.text, f"{base}/text", self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        return keys_defined(self.id, self.output_key)

    def detail(self) -> str | None:
        return f"into {self.output_key}"


class ShoutKind(NodeKind[ShoutNode]):
    model = ShoutNode

    async def run(self, node: ShoutNode, state: PlaybookState, frame: Frame) -> Update:
        text = render(node.text, variables(state))
        if not text.strip():
            raise NodeFailed("nothing to shout", playbook=frame.name, node=node.id)
        return {**assign({node.output_key: text.upper() + "!"}), "last": text.upper() + "!"}


REGISTRY = builtin_registry().with_kinds(ShoutKind())
TYPES = REGISTRY.node_types()


def _playbook(**shout: object) -> dict[str, object]:
    node: dict[str, object] = {
        "id": "loud",
        "type": "shout",
        "text": "{input}",
        "output_key": "loud_text",
        "next": "answer",
        "error_next": "oops",
    }
    node.update(shout)
    return {
        "name": "shouting",
        "description": "shout the input back",
        "start_node": "loud",
        "output_schema": ["loud_text"],
        "nodes": [
            node,
            {"id": "answer", "type": "say", "action": "{loud_text}"},
            {"id": "oops", "type": "say", "action": "could not shout: {error.message}"},
        ],
    }


def _findings(document: dict[str, object]) -> list[str]:
    result = check_document(json.dumps(document), types=TYPES)
    return [f"{d.code} {d.message}" for d in result.diagnostics]


def test_a_valid_playbook_with_the_new_type_loads() -> None:
    result = check_document(json.dumps(_playbook()), types=TYPES)
    assert result.diagnostics == []
    assert result.playbook is not None
    assert isinstance(result.playbook.nodes[0], ShoutNode)


def test_the_built_in_vocabulary_does_not_know_it() -> None:
    result = check_document(json.dumps(_playbook()))
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "SEA013" and "unknown node type `shout`" in diagnostic.message
    assert "shout" not in (diagnostic.hint or "")


def test_its_fields_are_validated_with_its_own_hints() -> None:
    result = check_document(json.dumps(_playbook(message="hi")), types=TYPES)
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "SEA011"
    assert "unknown field `message` on `shout`" in diagnostic.message
    assert diagnostic.hint == "the text to shout is `text`"
    missing = _playbook()
    del missing["nodes"][0]["output_key"]  # type: ignore[index]
    assert _findings(missing) == ["SEA010 missing required field `output_key` on `shout`"]
    unknown = _playbook(type="shuot")
    hint = check_document(json.dumps(unknown), types=TYPES).diagnostics[0].hint or ""
    assert hint.startswith("did you mean `shout`?")


def test_its_reads_and_definitions_take_part_in_the_variable_checks() -> None:
    assert _findings(_playbook(text="{nobody_set_this}")) == [
        "SEA030 `{nobody_set_this}` reads `nobody_set_this`, which nothing defines"
    ]
    renamed = _findings(_playbook(output_key="other"))
    assert "SEA030 `{loud_text}` reads `loud_text`, which nothing defines" in renamed


def test_its_edges_take_part_in_the_graph_checks() -> None:
    assert "SEA022 next of node `loud` goes to `nowhere`, which is not a node" in _findings(
        _playbook(next="nowhere")
    )
    assert _findings(_playbook(error_next="gone"))[0] == (
        "SEA023 error_next of node `loud` goes to `gone`, which is not a node"
    )
    not_fallible = _playbook()
    not_fallible["nodes"][1]["error_next"] = "oops"  # type: ignore[index]
    assert _findings(not_fallible)[0].startswith("SEA018 `error_next` on a `say` node")


def test_it_is_drawn_with_its_own_shape_and_detail() -> None:
    result = check_document(json.dumps(_playbook()), types=TYPES)
    assert result.playbook is not None
    drawing = to_mermaid(result.playbook)
    assert 'n0[\\"loud<br/>shout: into loud_text"/]' in drawing
    assert "n0 --> n1" in drawing and "n0 -. error .-> n2" in drawing


def test_it_runs_and_its_failures_are_routed(tmp_path: Path, store: SQLiteStore) -> None:
    folder = tmp_path / "playbooks"
    folder.mkdir()
    (folder / "shouting.json").write_text(json.dumps(_playbook()))
    runtime = Runtime(RuntimeConfig(
        store,
        ModelSet.single(ScriptedChatModel.from_mapping({})),
        library=folder,
        registry=REGISTRY,
        checkpoint_path=tmp_path / "checkpoints.sqlite",
    ))
    with runtime:
        persona = Persona("aiko", "Aiko", "")
        done = runtime.run_pulse(persona, "shouting", "hello there")
        assert done.status == "ok"
        assert done.spoken == ["HELLO THERE!"]
        assert done.outputs == {"loud_text": "HELLO THERE!"}
        failed = runtime.run_pulse(persona, "shouting", "   ")
        assert failed.status == "ok"
        assert failed.spoken == ["could not shout: nothing to shout"]


def test_a_runtime_without_the_kind_rejects_the_playbook(
    tmp_path: Path, store: SQLiteStore
) -> None:
    folder = tmp_path / "playbooks"
    folder.mkdir()
    (folder / "shouting.json").write_text(json.dumps(_playbook()))
    runtime = Runtime(RuntimeConfig(
        store,
        ModelSet.single(ScriptedChatModel.from_mapping({})),
        library=folder,
        checkpoint_path=tmp_path / "checkpoints.sqlite",
    ))
    with runtime:
        result = runtime.run_pulse(Persona("aiko", "Aiko", ""), "shouting", "hello")
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "SEA013"
    assert "unknown node type `shout`" in result.error["message"]


def test_every_built_in_type_has_exactly_one_kind() -> None:
    assert builtin_registry().node_types().models == BUILTIN_NODE_TYPES.models
    with pytest.raises(UsageError, match="registered twice"):
        builtin_registry().with_kinds(ShoutKind(), ShoutKind())
