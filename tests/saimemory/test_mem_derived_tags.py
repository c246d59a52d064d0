"""A message's ``pulse:``, ``playbook:`` and ``node:`` tags are derived from its columns on
every read, never stored (migration 14): ``message_tags`` holds its own tags only, every read
gives its own tags in order and then those three, a search filtered by one of them tests the
column, and an older store that stored them reads the same after the upgrade (both
backends)."""

from __future__ import annotations

import itertools
import sqlite3
import uuid

import orjson
import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from saimemory import CONVERSATION_TAG, Message, NewMessage
from saimemory.schema_postgres import POSTGRES_APPEND as _POSTGRES_APPEND
from saimemory.sqlbase import SqlStore
from tests.saimemory.conftest import POSTGRES_DSN, StoreFactory, StoreSpec
from tests.saimemory.test_mem_row_tags import everything, own

OWN = [("zeta", CONVERSATION_TAG), (), ("topic:rain",), ("日本語", 'quote"d')]
"""Own tags: out of order, none, one with a colon but another prefix, characters JSON
escapes."""


def written_messages() -> list[NewMessage]:
    """Every combination of pulse, playbook and node present or missing, over the own tags."""
    combos = itertools.product((None, "p0", "p1"), (None, "pb"), (None, "n1", "n2"))
    return [NewMessage("aoi", "user", f"message {i} about the weather", tags=OWN[i % len(OWN)],
                       pulse_id=pulse, playbook=playbook, node=node)
            for i, (pulse, playbook, node) in enumerate(combos)]


def derived(message: Message) -> tuple[str, ...]:
    return tuple(
        f"{name}:{value}" for name, value in (
            ("pulse", message.pulse_id), ("playbook", message.playbook), ("node", message.node))
        if value is not None)


def stored_tags(store: SqlStore) -> dict[int, tuple[str, ...]]:
    with store._read() as tx:
        rows = tx.fetch("SELECT message_id, tag FROM message_tags ORDER BY message_id, pos")
    tags: dict[int, list[str]] = {}
    for message_id, tag in rows:
        tags.setdefault(int(message_id), []).append(tag)
    return {message_id: tuple(found) for message_id, found in tags.items()}


FILTERS = [["pulse:p0"], ["playbook:pb"], ["node:n2"], ["pulse:p1", "node:n1"],
           ["pulse:p1", CONVERSATION_TAG], ["topic:rain"], ["pulse:nope"], ["pulse:"],
           ["node:n1", "playbook:pb", "pulse:p0"]]


def test_reads_derive_the_tags_the_store_no_longer_keeps(store: SqlStore) -> None:
    written = store.append_many(written_messages())
    for message, new in zip(written, written_messages(), strict=True):
        assert message.tags == (*new.tags, *derived(message))
    assert written[0].tags == ("zeta", CONVERSATION_TAG)  # no pulse, playbook or node
    assert written[2].tags == ("topic:rain", "node:n2")
    assert written[-1].tags == ("pulse:p1", "playbook:pb", "node:n2")
    assert stored_tags(store) == {m.id: own(m) for m in written if own(m)}
    by_id = {m.id: m for m in written}
    for read in everything(store, "weather"):
        assert read, "every read finds messages"
        for message in read:
            assert message == by_id[message.id]


@pytest.mark.parametrize("tags", FILTERS, ids=lambda tags: "+".join(tags) or "none")
def test_a_search_filtered_by_a_derived_tag_tests_its_column(
    store: SqlStore, tags: list[str]
) -> None:
    written = store.append_many(written_messages())
    expected = {m.id for m in written if set(tags) <= set(m.tags)}
    for match in ("all", "any"):
        hits = store.search("aoi", "weather", tags=tags, limit=100, match=match)
        assert {hit.message.id for hit in hits} == expected
    if tags == ["pulse:nope"] or tags == ["pulse:"]:
        assert not expected


def test_a_tag_filter_must_be_a_string(store: SqlStore) -> None:
    from saimemory.errors import InvalidQueryError

    store.append_many(written_messages())
    with pytest.raises(InvalidQueryError, match="tags must be strings"):
        store.search("aoi", "weather", tags=["pulse:p0", 7])  # type: ignore[list-item]


def store_as_version_13(spec: StoreSpec, store: SqlStore, written: list[Message]) -> None:
    """Write the tags as a store of version 13 kept them: every tag in ``message_tags`` (and,
    on SQLite, in the row's array); on PostgreSQL no tags in the row, the append function of
    migration 9 and the trigram index of migration 7."""
    rows = [(m.id, pos, tag, m.persona, m.thread)
            for m in written for pos, tag in enumerate(m.tags) if pos >= len(own(m))]
    if spec.backend == "sqlite":
        with sqlite3.connect(spec.path) as conn:
            conn.executemany("INSERT INTO message_tags (message_id, pos, tag, persona, thread)"
                             " VALUES (?, ?, ?, ?, ?)", rows)
            conn.executemany("UPDATE messages SET tags = ? WHERE id = ?",
                             [(orjson.dumps(list(m.tags)).decode(), m.id) for m in written])
            conn.execute("DELETE FROM schema_migrations WHERE version >= 14")
        return
    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN) as conn:
        conn.execute(f"SET search_path TO {spec.schema}, public")
        conn.cursor().executemany(
            "INSERT INTO message_tags (message_id, pos, tag, persona, thread)"
            " VALUES (%s, %s, %s, %s, %s)", rows)
        conn.execute("CREATE INDEX messages_persona_content_trgm ON messages"
                     " USING gin (persona, content public.gin_trgm_ops)")
        conn.execute("ALTER TABLE messages DROP COLUMN tags")  # version 13 had none
        conn.execute(_POSTGRES_APPEND[0])  # nor an append that writes one
        conn.execute("DELETE FROM schema_migrations WHERE version >= 14")


def messages_indexes(spec: StoreSpec) -> set[str]:
    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN) as conn:
        return {row[0] for row in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = 'messages'",
            (spec.schema,))}


def test_an_older_store_reads_the_same_after_the_upgrade(
    spec: StoreSpec, open_same: StoreFactory
) -> None:
    old = open_same()
    written = old.append_many(written_messages())
    old.close()
    store_as_version_13(spec, old, written)
    if spec.backend == "postgres":
        assert "messages_persona_content_trgm" in messages_indexes(spec)
    store = open_same()
    try:
        assert store.schema_version() == store.migrations[-1].version >= 14
        assert stored_tags(store) == {m.id: own(m) for m in written if own(m)}
        by_id = {m.id: m for m in written}
        for read in everything(store, "weather"):
            assert read
            assert all(message == by_id[message.id] for message in read)
        if spec.backend == "sqlite":
            with sqlite3.connect(spec.path) as conn:
                arrays = dict(conn.execute("SELECT id, tags FROM messages").fetchall())
            assert {i: tuple(orjson.loads(a)) for i, a in arrays.items()} == {
                m.id: own(m) for m in written}
        else:
            assert "messages_persona_content_trgm" not in messages_indexes(spec)
            with store._read() as tx:
                arrays = dict(tx.fetch("SELECT id, tags FROM messages"))
            assert {i: tuple(a) for i, a in arrays.items() if a is not None} == {
                m.id: own(m) for m in written if own(m)}
        later = store.append(NewMessage("aoi", "user", "after", tags=("x",), pulse_id="p9"))
        assert later.tags == ("x", "pulse:p9")
        assert store.recent("aoi", limit=1) == [later]
        assert [h.message for h in store.search("aoi", "after", tags=["pulse:p9"])] == [later]
    finally:
        store.close()



_names = st.sampled_from(["p0", "p1", "pb", "n1", "a:b", "日本"])
_own = st.lists(st.sampled_from(["zeta", CONVERSATION_TAG, "topic:rain", "Pulse:p0", "pulse",
                                 "node"]), max_size=3, unique=True)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=st.lists(st.tuples(st.none() | _names, st.none() | _names,
                                   st.none() | _names, _own), min_size=1, max_size=6),
       wanted=st.lists(st.sampled_from(
           ["pulse:p0", "pulse:a:b", "playbook:pb", "playbook:日本", "node:n1", "node:",
            "Pulse:p0", "topic:rain", CONVERSATION_TAG, "pulse", "pulse:"]),
           min_size=1, max_size=3))
@example(messages=[("a:b", "a:b", None, []), ("a", None, None, ["topic:rain"])],
         wanted=["pulse:a:b"])  # a value with a colon: the tag's prefix ends at the first
def test_any_tag_filter_finds_the_messages_whose_tags_hold_it(
    store: SqlStore,
    messages: list[tuple[str | None, str | None, str | None, list[str]]],
    wanted: list[str],
) -> None:
    persona = f"p{uuid.uuid4().hex[:12]}"  # the store outlives one example
    written = store.append_many([
        NewMessage(persona, "user", f"weather {i}", tags=tuple(own), pulse_id=pulse,
                   playbook=playbook, node=node)
        for i, (pulse, playbook, node, own) in enumerate(messages)])
    expected = {m.id for m in written if set(wanted) <= set(m.tags)}
    for match in ("all", "any"):
        hits = store.search(persona, "weather", tags=wanted, limit=50, match=match)
        assert {hit.message.id for hit in hits} == expected
