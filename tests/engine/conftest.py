"""Fixtures for engine tests: a real SQLite store, a scripted model, test playbooks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.limits import Limits
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet

PLAYBOOKS = Path(__file__).parent / "playbooks"


@pytest.fixture
def persona() -> Persona:
    return Persona("aiko", "Aiko", "You are Aiko, a cheerful helper.")


@pytest.fixture
def library() -> PlaybookLibrary:
    return PlaybookLibrary([PLAYBOOKS])


MakeRuntime = Callable[..., tuple[Runtime, ScriptedChatModel]]


@pytest.fixture
def make_runtime(
    store: SQLiteStore, library: PlaybookLibrary, tmp_path: Path
) -> Iterator[MakeRuntime]:
    made: list[Runtime] = []

    def make(
        script: dict[str, Any] | None = None,
        *,
        tools: Any = (),
        limits: Limits | None = None,
        checkpoint: Path | None = None,
        keep_checkpoints: bool = False,
    ) -> tuple[Runtime, ScriptedChatModel]:
        model = ScriptedChatModel.from_mapping(script or {})
        runtime = Runtime(RuntimeConfig(
            store,
            ModelSet.single(model),
            tools=tools,
            library=library,
            limits=limits,
            checkpoint_path=checkpoint or tmp_path / "checkpoints.sqlite",
            keep_checkpoints=keep_checkpoints,
        ))
        made.append(runtime)
        return runtime, model

    yield make
    for runtime in made:
        runtime.close()
