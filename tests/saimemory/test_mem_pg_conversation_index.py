"""PostgreSQL keeps each thread's conversation in an index of its own (migration 17), so a
page of history reads the messages themselves and no tag rows; a store of version 16 gains
the index, and reads the same history, pages of it and cut conversation before and after."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from saimemory import HistoryBudget
from saimemory.one_read import history_statement
from saimemory.pg_tx import to_psycopg as _pg
from saimemory.postgres import PostgresStore
from saimemory.sqlbase import main_thread_id
from tests.saimemory.conftest import POSTGRES_DSN
from tests.saimemory.test_mem_pg_owner_statistics import fill, reads_one_page

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]


def plan_of_history(schema: str) -> dict[str, Any]:
    """The plan of a persona's history statement, run with its values."""
    persona = "p7"
    sql, params = history_statement(persona, main_thread_id(persona), "q1", "",
                                    HistoryBudget())
    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{schema}", public')
        return conn.execute(  # type: ignore[index,no-any-return]
            f"EXPLAIN (ANALYZE, FORMAT JSON) {_pg(sql)}", params).fetchone()[0][0]["Plan"]


def scanned(node: dict[str, Any]) -> set[tuple[str, str]]:
    """The (table, index) pairs a plan reads (the index empty for a table's own scan)."""
    found = {(node["Relation Name"], node.get("Index Name", ""))} if "Relation Name" in node \
        else set()
    return found.union(*(scanned(child) for child in node.get("Plans", [])))


def test_a_store_of_version_16_reads_history_through_the_conversation_index(
    pg: tuple[Any, str]
) -> None:
    store, schema = pg
    fill(store)
    with store._write() as tx:
        tx.run("DROP INDEX messages_conversation")
        tx.run("DELETE FROM schema_migrations WHERE version >= 17")
    before = store.history("p7", pulse_id="q1")
    pages = store.history("p7", budget=HistoryBudget(max_messages=150, max_chars=10**6))
    older = store.conversation_before("p7", before=before[-10].id, after=before[0].id)
    store.close()
    assert POSTGRES_DSN is not None
    again = PostgresStore(POSTGRES_DSN, schema=schema)
    try:
        assert again.schema_version() == again.migrations[-1].version >= 17
        with again._write() as tx:
            tx.run("ANALYZE messages")
        assert again.history("p7", pulse_id="q1") == before
        assert len(before) == HistoryBudget().max_messages
        # pages beyond one, and a summary's cut, read the conversation through it too
        assert again.history("p7", budget=HistoryBudget(max_messages=150, max_chars=10**6)
                             ) == pages
        assert len(pages) == 150
        assert again.conversation_before("p7", before=before[-10].id, after=before[0].id
                                         ) == older == before[1:-10]
        tables = {table for table, _ in scanned(plan_of_history(schema))}
        assert tables == {"messages"}
        assert ("messages", "messages_conversation") in scanned(plan_of_history(schema))
        assert reads_one_page(again, schema)
    finally:
        again.close()
