"""PostgreSQL's search indexes of messages keep short pending lists (migration 16): appends
leave at most :data:`~saimemory.migrations.GIN_PENDING_KB` kB of entries unmerged, which
every search reads, and a store of version 15 has its lists merged and bounded on opening.
The lists are read with ``pgstattuple``, an extension shipped with PostgreSQL."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from saimemory import NewMessage
from saimemory.migrations import GIN_PENDING_KB
from saimemory.postgres import PostgresStore
from tests.saimemory.conftest import POSTGRES_DSN

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]

INDEXES = ("messages_persona_grams", "messages_persona_short")
PAGE_KB = 8


@pytest.fixture(scope="module")
def pgstattuple() -> None:
    """The extension that reads a GIN index's pending list, made when the server allows."""
    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        for _ in range(3):  # another test process may be making it too
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple SCHEMA public")
                return
            except psycopg.errors.UniqueViolation:
                continue
            except psycopg.Error as exc:
                pytest.skip(f"pgstattuple cannot be made on this server: {exc}")


def pending_pages(schema: str) -> dict[str, int]:
    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        return {index: int(conn.execute(  # type: ignore[index]
            "SELECT pending_pages FROM public.pgstatginindex(%s::regclass)",
            [f'"{schema}".{index}']).fetchone()[0]) for index in INDEXES}


def append_many_words(store: PostgresStore, count: int) -> None:
    """Messages of many different words and short words, one append each, as a pulse
    writes them: about 25 pending pages a hundred under the server's default limit."""
    for i in range(count):
        store.append(NewMessage("aoi", "user", f"message {i} {i * 7919} word{i}x{i % 97} 猫{i}"
                                f" 雨の日{i % 13} {'abcdefghij'[i % 10] * 3}{i}"))


def test_appends_leave_short_pending_lists(pg: tuple[Any, str], pgstattuple: None) -> None:
    store, schema = pg
    append_many_words(store, 400)
    pages = pending_pages(schema)
    assert all(0 <= n <= GIN_PENDING_KB // PAGE_KB for n in pages.values()), pages
    assert len(store.search("aoi", "word17x17")) == 1
    assert len(store.search("aoi", "猫17", limit=50)) == 11  # 猫17 and 猫170 to 猫179


def test_a_store_of_version_15_gets_short_merged_lists(
    pg: tuple[Any, str], pgstattuple: None
) -> None:
    store, schema = pg
    with store._write() as tx:  # as version 15 left it: the server's limit
        for index in INDEXES:
            tx.run(f"ALTER INDEX {index} RESET (gin_pending_list_limit)")
        tx.run("DELETE FROM schema_migrations WHERE version >= 16")
    append_many_words(store, 400)
    store.close()
    grown = pending_pages(schema)
    assert all(n > GIN_PENDING_KB // PAGE_KB for n in grown.values()), grown
    assert POSTGRES_DSN is not None
    again = PostgresStore(POSTGRES_DSN, schema=schema)
    try:
        assert again.schema_version() == again.migrations[-1].version >= 16
        assert pending_pages(schema) == {index: 0 for index in INDEXES}
        assert len(again.search("aoi", "word17x17")) == 1
        append_many_words(again, 50)
        assert all(n <= GIN_PENDING_KB // PAGE_KB for n in pending_pages(schema).values())
    finally:
        again.close()
