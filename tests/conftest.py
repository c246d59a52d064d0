"""Fixtures shared by the test packages: a real SQLite store and a persona.

A package's own conftest may define a fixture of the same name; pytest uses the nearer one.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from saimemory import Persona
from saimemory.sqlite import SQLiteStore

# Property tests check what holds, not how fast: hypothesis's per-example deadline (200 ms)
# failed a pure test on this shared two-core machine while other work loaded it.
settings.register_profile("sea", deadline=None)
settings.load_profile("sea")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (``make test``, ``make test-postgres``): a worker per core, and one more.
    The tests wait a fifth of their time on what they start (servers, ``sea`` processes,
    terminals, streamed replies): on two cores, the fast tests took 143 to 158 s with two
    workers, 127 s with three. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when set."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


_CACHES = itertools.count()


@pytest.fixture(autouse=True)
def _verdict_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sea validate`` keeps its verdicts under ``$SEA_CACHE_DIR``: each test has its own,
    so no test reads another's verdicts, nor the user's cache. It is only named here (a
    name no other test of this process gets, in this process's temporary directory):
    ``sea validate`` makes it when it keeps a verdict, and most tests keep none."""
    cache = tmp_path_factory.getbasetemp() / f"verdicts-{next(_CACHES)}"
    monkeypatch.setenv("SEA_CACHE_DIR", str(cache))


@pytest.fixture(autouse=True)
def _no_settings_from_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``SEA_*`` setting in the shell that runs the tests (``SEA_MODEL``, ``SEA_PROJECT``...)
    would change every command a test runs: none reaches a test unless it sets one
    (``SEA_DB`` and ``SEA_HOME`` are set by the fixtures that need them)."""
    from sea.cli._project.load import PROJECT_ENV
    from sea.cli._project.settings import SETTINGS

    for name in {s.env for s in SETTINGS if s.env not in (None, "SEA_DB")} | {PROJECT_ENV}:
        assert name is not None
        monkeypatch.delenv(name, raising=False)


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that is skipped without ``SEA_TEST_POSTGRES_DSN`` needs PostgreSQL: it carries
    the ``postgres`` marker, so ``make test-postgres`` runs it and ``make test`` leaves it
    to that target, whether or not its module named the marker too."""
    postgres = pytest.mark.postgres
    for item in items:
        if item.get_closest_marker("postgres") is not None:
            continue
        if any("SEA_TEST_POSTGRES_DSN" in str(mark.kwargs.get("reason", ""))
               for mark in item.iter_markers("skipif")):
            item.add_marker(postgres)
