"""The typed playbook models accept the SAIVerse format and reject unknown fields."""

import pytest
from pydantic import ValidationError

from sea.lang.models import Playbook
from sea.lang.node_models import LLMNode, SetNode


def test_minimal_playbook_parses_with_typed_nodes() -> None:
    pb = Playbook.model_validate(
        {
            "name": "hello",
            "description": "says hello",
            "start_node": "a",
            "nodes": [{"id": "a", "type": "set", "assignments": {"x": 1}}],
        }
    )
    node = pb.node("a")
    assert isinstance(node, SetNode)
    assert node.assignments == {"x": 1}


def test_unknown_field_on_llm_node_is_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        LLMNode.model_validate({"id": "a", "type": "llm", "tools": ["x"]})
    assert info.value.errors()[0]["loc"] == ("tools",)
