"""Compilation: one graph per content hash, clear errors for what LangGraph refuses."""

from __future__ import annotations

import pytest

from sea.engine.compiler import Compiler
from sea.engine.limits import Limits
from sea.errors import UsageError
from sea.lang.models import Playbook
from sea.nodes import builtin_registry


def _playbook(node_id: str) -> Playbook:
    return Playbook.model_validate(
        {
            "name": "p",
            "description": "d",
            "start_node": node_id,
            "nodes": [{"id": node_id, "type": "pass"}],
        }
    )


def test_same_hash_same_graph() -> None:
    compiler = Compiler(builtin_registry())
    first = compiler.compile(_playbook("a"), "h1")
    assert compiler.compile(_playbook("a"), "h1") is first
    assert compiler.compile(_playbook("a"), "h2") is not first
    assert compiler.cached() == 2


def test_reserved_node_name_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="cannot be compiled"):
        Compiler(builtin_registry()).compile(_playbook("__end__"), "h")


@pytest.mark.parametrize("field", ["max_steps", "max_visits", "max_depth"])
def test_limits_must_be_positive(field: str) -> None:
    with pytest.raises(UsageError, match=field):
        Limits(**{field: 0})
