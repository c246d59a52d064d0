"""Fixtures shared by the test packages: a real SQLite store and a persona.

A package's own conftest may define a fixture of the same name; pytest uses the nearer one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from saimemory import Persona
from saimemory.sqlite import SQLiteStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    """A fresh SQLite store in a temporary directory."""
    opened = SQLiteStore(tmp_path / "memory.db")
    yield opened
    opened.close()


@pytest.fixture
def persona() -> Persona:
    """The persona whose context is built."""
    return Persona(id="mika", name="Mika", system_prompt="You are Mika, a careful librarian.")
