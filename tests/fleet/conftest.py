"""Fixtures of the many-process server tests: a PostgreSQL schema of their own."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

DSN = os.environ.get("SEA_TEST_POSTGRES_DSN")
needs_postgres = [
    pytest.mark.postgres,
    pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set"),
]


def drop_schema(schema: str) -> None:
    """Remove a test schema and everything in it."""
    import psycopg

    assert DSN is not None
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def store_dsn() -> Iterator[str]:
    """A DSN whose ``?schema=`` is fresh (dropped afterwards)."""
    assert DSN is not None
    schema = f"f_{uuid.uuid4().hex[:10]}"
    separator = "&" if "?" in DSN else "?"
    yield f"{DSN}{separator}schema={schema}"
    drop_schema(schema)
