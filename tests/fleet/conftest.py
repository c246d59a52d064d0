"""Fixtures of the many-process server tests: a PostgreSQL schema of their own (the queue
tests' helpers, :mod:`tests.workers.conftest`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.workers.conftest import DSN, drop_schema, fresh_schema, needs_postgres

__all__ = ["DSN", "drop_schema", "needs_postgres", "store_dsn"]


@pytest.fixture
def store_dsn() -> Iterator[str]:
    """A DSN whose ``?schema=`` is fresh (dropped afterwards)."""
    yield from fresh_schema("f_")
