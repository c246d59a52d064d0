"""Fixtures for engine tests: a real SQLite store, a scripted model, test playbooks."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.errors import SeaError
from sea.limits import Limits
from sea.llm.models import ModelSet
from sea.models import Playbook
from sea.runtime import Runtime
from sea.scripted import ScriptedChatModel

PLAYBOOKS = Path(__file__).parent / "playbooks"


class DirLibrary:
    """Test playbooks by name from one directory (the engine's Library port)."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._cache: dict[str, Playbook] = {}

    def _path(self, name: str) -> Path:
        path = self._dir / f"{name}.json"
        if not path.is_file():
            raise SeaError(f"unknown playbook {name!r}", code="SEA120")
        return path

    def get(self, name: str) -> Playbook:
        if name not in self._cache:
            self._cache[name] = Playbook.model_validate_json(self._path(name).read_bytes())
        return self._cache[name]

    def content_hash(self, name: str) -> str:
        return hashlib.sha256(self._path(name).read_bytes()).hexdigest()

    def router_callable(self) -> list[Playbook]:
        names = sorted(p.stem for p in self._dir.glob("*.json"))
        return [pb for pb in map(self.get, names) if pb.router_callable]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    db = SQLiteStore(tmp_path / "memory.sqlite")
    yield db
    db.close()


@pytest.fixture
def persona() -> Persona:
    return Persona("aiko", "Aiko", "You are Aiko, a cheerful helper.")


@pytest.fixture
def library() -> DirLibrary:
    return DirLibrary(PLAYBOOKS)


MakeRuntime = Callable[..., tuple[Runtime, ScriptedChatModel]]


@pytest.fixture
def make_runtime(
    store: SQLiteStore, library: DirLibrary, tmp_path: Path
) -> Iterator[MakeRuntime]:
    made: list[Runtime] = []

    def make(
        script: dict[str, Any] | None = None,
        *,
        tools: Any = (),
        limits: Limits | None = None,
        checkpoint: Path | None = None,
    ) -> tuple[Runtime, ScriptedChatModel]:
        model = ScriptedChatModel.from_mapping(script or {})
        runtime = Runtime(
            store,
            ModelSet.single(model),
            tools=tools,
            library=library,
            limits=limits,
            checkpoint_path=checkpoint or tmp_path / "checkpoints.sqlite",
        )
        made.append(runtime)
        return runtime, model

    yield make
    for runtime in made:
        runtime.close()
