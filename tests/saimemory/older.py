"""SQLite stores as earlier releases wrote and read them, for the tests of later migrations:
the first ``version`` migrations, and the shared SQL of :class:`SqlStore` where a later
migration gave SQLite its own (the counts of migration 9, the walk of 12), or the reads
those releases made (the tags from ``message_tags``, before migration 10 kept them in the
row)."""

from __future__ import annotations

from saimemory.migrations import SQLITE_MIGRATIONS
from saimemory.records import CONVERSATION_TAG, Message
from saimemory.sqlbase import COLUMNS, PAGE, SqlStore, message_of
from saimemory.sqlite import SQLiteStore
from saimemory.tx import Row, Tx

BEFORE_LINES = COLUMNS.replace("m.line_role, m.line_scope", "'main_line', 'committed'")
"""The message columns read before migration 15: every message main-line and committed."""


class Version14(SQLiteStore):
    """Schema 14: no line or scope of a message (every message main-line and committed)."""

    migrations = SQLITE_MIGRATIONS[:14]
    _columns = f"{BEFORE_LINES}, m.tags"
    _line_columns = ()
    _main_line = "1 = 1"
    _conversation = (
        "message_tags t JOIN messages m ON m.id = t.message_id WHERE t.persona = ?"
        f" AND t.tag = '{CONVERSATION_TAG}' AND t.thread = ?",
        "t.message_id",
    )


class Version12(Version14):
    """Schema 12: the trigram index keeps each message's size."""

    migrations = SQLITE_MIGRATIONS[:12]


class Version11(Version12):
    """Schema 11: a trigger each for the two indexes and the counts; the index of short
    words holds every message (the walk of the newest messages stops at the walk's size)."""

    migrations = SQLITE_MIGRATIONS[:11]
    _walk_floor = SqlStore._walk_floor


class Version10(Version11):
    """Schema 10: every tag in the index by persona, tag and thread."""

    migrations = SQLITE_MIGRATIONS[:10]


class Version9(Version10):
    """Schema 9: a message's tags only in ``message_tags``."""

    migrations = SQLITE_MIGRATIONS[:9]
    _columns = BEFORE_LINES
    _extra_columns = SqlStore._extra_columns
    _row_extra = SqlStore._row_extra

    def _messages(self, tx: Tx, rows: list[Row]) -> list[Message]:
        return messages_from_tag_table(tx, rows)


def messages_from_tag_table(tx: Tx, rows: list[Row]) -> list[Message]:
    """The messages of rows of :data:`~saimemory.sqlbase.COLUMNS` with their own tags read
    from ``message_tags`` (as every read did before the tags were kept in the row)."""
    tags: dict[int, list[str]] = {row[0]: [] for row in rows}
    ids = list(tags)
    for start in range(0, len(ids), PAGE):
        chunk = ids[start:start + PAGE]
        marks = ", ".join("?" * len(chunk))
        for message_id, tag in tx.fetch(
            f"SELECT message_id, tag FROM message_tags WHERE message_id IN ({marks}) "
            "ORDER BY message_id, pos",
            chunk,
        ):
            tags[message_id].append(tag)
    return [message_of(row, tags[row[0]]) for row in rows]


class Version8(Version9):
    """Schema 8: no kept counts; the ``any`` search counted the persona's messages."""

    migrations = SQLITE_MIGRATIONS[:8]
    _collection = SqlStore._collection


class Version7(Version8):
    """Schema 7: no index of short words."""

    migrations = SQLITE_MIGRATIONS[:7]
