"""Fixtures for plan tests: a real workspace folder beside an outside folder holding a secret,
a real SQLite store (from tests/conftest.py), and services that record their events."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from saimemory.base import MessageStore
from sea.engine.plans import PlanEvent, PlanPolicy, PlanService

SECRET = "TOPSECRET outside the workspace\n"

MakeService = Callable[..., PlanService]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace, holding ``secret.txt``; plans must never touch it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    return folder


@pytest.fixture
def events() -> list[PlanEvent]:
    """Every event the services made by ``make_service`` sent."""
    return []


@pytest.fixture
def make_service(store: MessageStore, workspace: Path, events: list[PlanEvent]) -> MakeService:
    """A plan service of persona ``aoi`` over the workspace (policy and store overridable)."""

    def make(policy: PlanPolicy | None = None, **kwargs: Any) -> PlanService:
        return PlanService(kwargs.pop("store", store), kwargs.pop("persona", "aoi"),
                           kwargs.pop("workspace", workspace), policy,
                           on_event=events.append, **kwargs)

    return make


@pytest.fixture
def service(make_service: MakeService) -> PlanService:
    """A plan service with the default policy."""
    return make_service()


def python_command(code: str) -> str:
    """A command line running this interpreter on ``code`` (for ``run`` specs)."""
    return shlex.join([sys.executable, "-c", code])


PYTHON_ONLY = PlanPolicy(run_allowlist=frozenset({sys.executable}), run_timeout_s=10)
"""A policy allowing ``run`` specs of this interpreter only."""
