"""SQLite keeps each message's own tags in its row too (migration 10): every read gives the
tags ``message_tags`` holds, in their order, then those of the message's pulse, playbook and
node (migration 14), for messages written before and after the upgrade."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from saimemory import CONVERSATION_TAG, Message, NewMessage
from saimemory.records import PROVENANCE_PREFIXES
from saimemory.sqlbase import SqlStore
from saimemory.sqlite import SQLiteStore
from tests.saimemory.older import Version9, messages_from_tag_table

TAGS = [("zeta", "alpha", CONVERSATION_TAG), ("b", "a"), (), ("日本語", 'quote"d', "back\\slash"),
        tuple(f"t{i:03d}" for i in range(150, 0, -1))]
"""Out of alphabetical order, none, characters JSON escapes, more than a page of them."""


def write(store: SQLiteStore) -> list[Message]:
    return store.append_many([
        NewMessage("aoi", "user", f"message {i}", tags=tags, pulse_id=f"p{i % 2}",
                   playbook="pb", node="n")
        for i, tags in enumerate(TAGS)
    ])


def everything(store: SqlStore, word: str = "message") -> list[list[Message]]:
    """Every read that returns messages, over all of them (the searches for ``word``)."""
    return [
        store.recent("aoi", limit=100), list(store.iter_messages("aoi")),
        store.pulse_messages("aoi", "p0"), store.history("aoi", pulse_id="p1"),
        store.conversation_before("aoi", before=None),
        [hit.message for hit in store.search("aoi", word, limit=100)],
        [hit.message for hit in store.search("aoi", f"{word} zzz", limit=100, match="any")],
    ]


def own(message: Message) -> tuple[str, ...]:
    """A message's own tags: not those of its pulse, playbook and node."""
    return tuple(tag for tag in message.tags if not tag.startswith(PROVENANCE_PREFIXES))


def tag_table(path: Path) -> dict[int, tuple[str, ...]]:
    """Each message's tags as ``message_tags`` holds them, in order."""
    tags: dict[int, list[str]] = {}
    with sqlite3.connect(path) as conn:
        for message_id, tag in conn.execute(
                "SELECT message_id, tag FROM message_tags ORDER BY message_id, pos"):
            tags.setdefault(message_id, []).append(tag)
    return {message_id: tuple(found) for message_id, found in tags.items()}


def test_every_read_gives_the_tags_written_in_their_order(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    try:
        written = write(store)
        assert [m.tags for m in store.recent("aoi", limit=100)] == [m.tags for m in written]
        assert written[0].tags == ("zeta", "alpha", CONVERSATION_TAG, "pulse:p0",
                                   "playbook:pb", "node:n")
        # message_tags holds each message's own tags; pulse:/playbook:/node: are derived
        assert {m.id: own(m) for m in written if own(m)} == tag_table(store.path)
        # the rows' tags and those message_tags holds (as reads took them) agree everywhere
        with store._read() as tx:
            rows = tx.fetch(f"SELECT {store._columns} FROM messages m ORDER BY m.id")
            assert store._messages(tx, rows) == messages_from_tag_table(tx, rows)
    finally:
        store.close()


def test_an_older_store_gains_the_tags_of_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old = Version9(path)
    written = write(old)
    before = everything(old)
    old.close()
    store = SQLiteStore(path)
    try:
        assert everything(store) == before
        assert [m.tags for m in store.recent("aoi", limit=100)] == [m.tags for m in written]
        later = store.append(NewMessage("aoi", "user", "after", tags=("x",)))
        assert store.recent("aoi", limit=1) == [later]
    finally:
        store.close()


def test_the_upgrade_applies_again_over_its_column(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    first = SQLiteStore(path)
    written = write(first)
    with first._write("aoi") as tx:
        tx.run("DELETE FROM schema_migrations WHERE version >= 10")
    first.close()
    again = SQLiteStore(path)
    try:
        assert again.recent("aoi", limit=100) == written
    finally:
        again.close()
