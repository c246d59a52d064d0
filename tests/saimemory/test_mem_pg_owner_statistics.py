"""PostgreSQL's planner knows that a thread belongs to one persona (migration 15): its
estimate of a persona's rows in one of its threads is the persona's share, not that share
times the thread's, so a page of history reads the newest rows of the conversation in
order instead of reading and sorting all of them, in the plan made with its values and in
the generic plan the server keeps (the page's size is a literal of the statement, so that
plan knows it too). A store of version 14 gains the statistics, built at once."""

from __future__ import annotations

import re
from typing import Any

import psycopg
import pytest
from psycopg import sql as pgsql

from saimemory import CONVERSATION_TAG, HistoryBudget
from saimemory.one_read import history_statement
from saimemory.pg_tx import to_psycopg as _pg
from saimemory.postgres import PostgresStore, estimated_rows
from saimemory.sqlbase import main_thread_id
from tests.saimemory.conftest import POSTGRES_DSN

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]

PERSONAS = 100
EACH = 200
"""Each persona's conversation: four pages of history (50 messages each). With fewer
messages, or personas, both plans read few rows and the planner may take either."""


def fill(store: PostgresStore) -> None:
    """A hundred personas, each with a conversation of :data:`EACH` tagged messages in its
    main thread (in one statement: appends would take a minute), then analyzed as autovacuum
    would."""
    for p in range(PERSONAS):
        store.main_thread(f"p{p}")
    with store._write() as tx:
        tx.run("INSERT INTO messages (persona, thread, role, content, created_us, pulse_id,"
               " scope, metadata, uid, tags) SELECT 'p' || (i % ?), 'p' || (i % ?) || ':main',"
               " 'user', 'note ' || i, i, 'q' || i, '', '{}', 'u' || i, ?"
               " FROM generate_series(1, ?) AS i",
               [PERSONAS, PERSONAS, [CONVERSATION_TAG], PERSONAS * EACH])
        tx.run("INSERT INTO message_tags (message_id, pos, tag, persona, thread)"
               " SELECT id, 0, ?, persona, thread FROM messages", [CONVERSATION_TAG])
        tx.run("ANALYZE messages")
        tx.run("ANALYZE message_tags")


def estimates(store: PostgresStore) -> tuple[float, float]:
    """The planner's rows of one persona in its main thread: of the messages, and of the
    conversation's tag rows."""
    persona = "p7"
    with store._read() as tx:
        (messages,) = estimated_rows(
            tx, "SELECT 1 FROM messages m WHERE m.persona = ? AND m.thread = ?",
            [persona, main_thread_id(persona)])
        (tags,) = estimated_rows(
            tx, "SELECT 1 FROM message_tags t WHERE t.persona = ? AND t.tag = ?"
            " AND t.thread = ?", [persona, CONVERSATION_TAG, main_thread_id(persona)])
    return messages, tags


def rows_read(store: PostgresStore, schema: str, mode: str) -> int:
    """How many rows the history statement of a persona reads from tables and indexes, in a
    plan made with its values (``force_custom_plan``: psycopg's first five executions on a
    connection) or without (``force_generic_plan``: the plan the server keeps for a
    prepared statement). The pulse has no messages: the rows are the earlier ones'."""
    persona = "p7"
    sql, params = history_statement(persona, main_thread_id(persona), "now", "",
                                    HistoryBudget())
    numbered = iter(range(1, len(params) + 1))
    prepared = re.sub("%s", lambda _: f"${next(numbered)}", _pg(sql))
    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{schema}", public')
        conn.execute(f"SET plan_cache_mode = {mode}")
        conn.execute(f"PREPARE history AS {prepared}")
        values = ", ".join(str(pgsql.Literal(value).as_string(conn)) for value in params)
        plan = conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE history ({values})"
                            ).fetchone()[0][0]["Plan"]  # type: ignore[index]

    def scans(node: dict[str, Any]) -> list[dict[str, Any]]:
        found = [node] if "Relation Name" in node else []
        return found + [s for child in node.get("Plans", []) for s in scans(child)]

    return sum(int(node["Actual Rows"]) for node in scans(plan))


def reads_one_page(store: PostgresStore, schema: str) -> bool:
    """Whether both plans of a page of history read one page of the conversation."""
    page = HistoryBudget().max_messages
    assert EACH > 2 * page
    return all(rows_read(store, schema, mode) <= page + 1
               for mode in ("force_custom_plan", "force_generic_plan"))


def test_a_personas_thread_is_estimated_as_the_personas_share(pg: tuple[Any, str]) -> None:
    store, schema = pg
    fill(store)
    messages, tags = estimates(store)
    # independent conditions would give EACH / PERSONAS = 2 rows
    assert EACH / 2 <= messages <= EACH * 2
    assert EACH / 2 <= tags <= EACH * 2
    # so a page of history reads one page of the conversation, in either plan
    assert reads_one_page(store, schema)
    assert store.history("p7")[-1].content == f"note {PERSONAS * EACH - 100 + 7}"


def test_a_store_of_version_14_gains_the_statistics(pg: tuple[Any, str]) -> None:
    store, schema = pg
    fill(store)
    with store._write() as tx:
        tx.run("DROP STATISTICS messages_owner")
        tx.run("DROP STATISTICS message_tags_owner")
        tx.run("ANALYZE messages")
        tx.run("ANALYZE message_tags")
        tx.run("DELETE FROM schema_migrations WHERE version >= 15")
    before = estimates(store)
    assert before[0] < EACH / 2 and before[1] < EACH / 2  # what the version-14 planner saw
    assert not reads_one_page(store, schema)  # and the conversation it read for a page
    assert POSTGRES_DSN is not None
    again = PostgresStore(POSTGRES_DSN, schema=schema)
    try:
        assert again.schema_version() == again.migrations[-1].version >= 15
        messages, tags = estimates(again)  # no ANALYZE since the upgrade: it built them
        assert EACH / 2 <= messages <= EACH * 2
        assert EACH / 2 <= tags <= EACH * 2
        assert reads_one_page(again, schema)
    finally:
        again.close()
