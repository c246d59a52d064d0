"""The statements of SQLite's schema migrations: the full-text index and the index of short
words keyed by persona ranges, the persona counts and the row tags (see
:mod:`saimemory.migrations`)."""

from __future__ import annotations

from saimemory.migration_runner import Unless
from saimemory.schema_common import PROVENANCE_ROWS, SHORT_KEYS_FUNCTION

FTS_ROWID_BITS = 40
"""SQLite's full-text index keys a message by ``(persona number << FTS_ROWID_BITS) | id``:
each persona's entries lie in one range of rowids, so a search reads only its persona's
part of each term's list, however many other personas share the file. Message ids stay
below ``2**40`` (a trillion) and persona numbers below ``2**23``."""


FTS_ROWID = (
    f"((SELECT n FROM persona_numbers WHERE persona = {{row}}.persona) << {FTS_ROWID_BITS})"
)


SQLITE_PERSONA_FTS = (
    "DROP TRIGGER IF EXISTS messages_fts_insert",
    "DROP TRIGGER IF EXISTS messages_fts_delete",
    "DROP TRIGGER IF EXISTS messages_fts_update",
    "DROP TABLE IF EXISTS messages_fts",
    "CREATE TABLE IF NOT EXISTS persona_numbers"
    " (n INTEGER PRIMARY KEY, persona TEXT NOT NULL UNIQUE)",
    "INSERT OR IGNORE INTO persona_numbers (persona)"
    " SELECT DISTINCT persona FROM messages ORDER BY 1",
    "DROP VIEW IF EXISTS messages_fts_source",
    "CREATE VIEW messages_fts_source AS SELECT"
    f" (p.n << {FTS_ROWID_BITS}) | m.id AS fts_rowid, m.content AS content"
    " FROM messages m JOIN persona_numbers p ON p.persona = m.persona",
    "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages_fts_source',"
    " content_rowid='fts_rowid', tokenize='trigram')",
    "CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN"
    " INSERT OR IGNORE INTO persona_numbers (persona) VALUES (new.persona);"
    " INSERT INTO messages_fts (rowid, content)"
    f" VALUES ({FTS_ROWID.format(row='new')} | new.id, new.content); END",
    "CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN"
    " INSERT INTO messages_fts (messages_fts, rowid, content)"
    f" VALUES ('delete', {FTS_ROWID.format(row='old')} | old.id, old.content); END",
    "CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, persona ON messages BEGIN"
    " INSERT INTO messages_fts (messages_fts, rowid, content)"
    f" VALUES ('delete', {FTS_ROWID.format(row='old')} | old.id, old.content);"
    " INSERT OR IGNORE INTO persona_numbers (persona) VALUES (new.persona);"
    " INSERT INTO messages_fts (rowid, content)"
    f" VALUES ({FTS_ROWID.format(row='new')} | new.id, new.content); END",
    "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
)
"""Migration 7 (SQLite): the full-text index keyed by persona ranges (:data:`FTS_ROWID_BITS`).
Each persona gets a number on its first message; the index's external content is a view
that gives each message its ranged rowid, so ``rebuild`` still works. Every statement may
run again over what an earlier try left (a store whose version record was rolled back)."""


SQLITE_SHORT_WORDS = (
    "DROP TRIGGER IF EXISTS messages_short_insert",
    "DROP TRIGGER IF EXISTS messages_short_delete",
    "DROP TRIGGER IF EXISTS messages_short_update",
    "DROP TABLE IF EXISTS messages_short",
    "DROP VIEW IF EXISTS messages_short_source",
    f"CREATE VIEW messages_short_source AS SELECT fts_rowid, {SHORT_KEYS_FUNCTION}(content)"
    " AS content FROM messages_fts_source",
    "CREATE VIRTUAL TABLE messages_short USING fts5(content,"
    " content='messages_short_source', content_rowid='fts_rowid', tokenize='ascii',"
    " detail='none', columnsize=0)",
    "CREATE TRIGGER messages_short_insert AFTER INSERT ON messages BEGIN"
    " INSERT OR IGNORE INTO persona_numbers (persona) VALUES (new.persona);"
    " INSERT INTO messages_short (rowid, content) VALUES"
    f" ({FTS_ROWID.format(row='new')} | new.id, {SHORT_KEYS_FUNCTION}(new.content)); END",
    "CREATE TRIGGER messages_short_delete AFTER DELETE ON messages BEGIN"
    " INSERT INTO messages_short (messages_short, rowid, content) VALUES ('delete',"
    f" {FTS_ROWID.format(row='old')} | old.id, {SHORT_KEYS_FUNCTION}(old.content)); END",
    "CREATE TRIGGER messages_short_update AFTER UPDATE OF content, persona ON messages BEGIN"
    " INSERT INTO messages_short (messages_short, rowid, content) VALUES ('delete',"
    f" {FTS_ROWID.format(row='old')} | old.id, {SHORT_KEYS_FUNCTION}(old.content));"
    " INSERT OR IGNORE INTO persona_numbers (persona) VALUES (new.persona);"
    " INSERT INTO messages_short (rowid, content) VALUES"
    f" ({FTS_ROWID.format(row='new')} | new.id, {SHORT_KEYS_FUNCTION}(new.content)); END",
    "INSERT INTO messages_short (messages_short) VALUES ('rebuild')",
)
"""Migration 8 (SQLite): the index of short words (:mod:`saimemory.grams`), keyed like
the full-text index by persona ranges, its external content a view giving each message's
keys. Only rowids are kept (``detail='none'``): a short word is one key, never a phrase.
Every statement may run again over what an earlier try left."""


SQLITE_PERSONA_COUNTS = (
    "CREATE TABLE IF NOT EXISTS persona_counts"
    " (persona TEXT PRIMARY KEY, messages INTEGER NOT NULL) WITHOUT ROWID",
    "DELETE FROM persona_counts",
    "INSERT INTO persona_counts (persona, messages)"
    " SELECT persona, count(*) FROM messages GROUP BY persona",
    "DROP TRIGGER IF EXISTS messages_count_insert",
    "DROP TRIGGER IF EXISTS messages_count_delete",
    "DROP TRIGGER IF EXISTS messages_count_update",
    "CREATE TRIGGER messages_count_insert AFTER INSERT ON messages BEGIN"
    " INSERT INTO persona_counts (persona, messages) VALUES (new.persona, 1)"
    " ON CONFLICT (persona) DO UPDATE SET messages = messages + 1; END",
    "CREATE TRIGGER messages_count_delete AFTER DELETE ON messages BEGIN"
    " UPDATE persona_counts SET messages = messages - 1 WHERE persona = old.persona; END",
    "CREATE TRIGGER messages_count_update AFTER UPDATE OF persona ON messages"
    " WHEN new.persona IS NOT old.persona BEGIN"
    " UPDATE persona_counts SET messages = messages - 1 WHERE persona = old.persona;"
    " INSERT INTO persona_counts (persona, messages) VALUES (new.persona, 1)"
    " ON CONFLICT (persona) DO UPDATE SET messages = messages + 1; END",
)
"""Migration 9 (SQLite): each persona's number of messages, kept by triggers in the
transaction that writes the messages. The ``any`` search weighs words by it; counting the
persona's entries of an index instead read up to
:data:`~saimemory.any_match.COLLECTION_CAP` of them at every search (1.7 ms at 10,000).
Every statement may run again over what an earlier try left."""


SQLITE_ROW_TAGS = (
    Unless("ALTER TABLE messages ADD COLUMN tags TEXT NOT NULL DEFAULT '[]'",
           done="SELECT 1 FROM pragma_table_info('messages') WHERE name = 'tags'"),
    "UPDATE messages SET tags = (SELECT json_group_array(tag) FROM"
    " (SELECT t.tag FROM message_tags t WHERE t.message_id = messages.id ORDER BY t.pos))"
    " WHERE id IN (SELECT message_id FROM message_tags)",
)
"""Migration 10 (SQLite): each message's tags in its row too, as a JSON array in order, so
a read of messages reads no other table (the tags of a history of 50 messages were a
second query, a sort and a table row each: more than the messages themselves).
``message_tags`` stays the index a search's tag filter and the conversation use. (The
aggregate takes the rows of an ordered subquery in their order; a test checks it.) Every
statement may run again over what an earlier try left."""


SQLITE_CONVERSATION_INDEX = (
    "CREATE INDEX IF NOT EXISTS message_tags_conversation ON message_tags"
    " (persona, tag, thread, message_id) WHERE tag = 'conversation'",
    "DROP INDEX IF EXISTS message_tags_lookup",
)
"""Migration 11 (SQLite): the index of the tags by persona, tag and thread holds the
conversation tag only, the one tag a read looks up that way (a tag filter finds a
message's tags by its id). Each append put its provenance tags (pulse, playbook, node)
into three places of that index, a third of the pages a commit wrote. Every statement may
run again over what an earlier try left."""


SHORT_INDEX_LAG = 128
"""How many of a persona's newest messages SQLite's index of short words may not hold yet
(migration 12): they are indexed together, the persona's pending messages at once when
they reach this many. A search of short words reads the messages the index does not hold
by ``LIKE`` (:meth:`~saimemory.sqlite.SQLiteStore._walk_floor`), as it reads the newest
few hundred anyway."""


def sqlite_one_trigger_each(lag: int) -> tuple[str | Unless, ...]:
    """Migration 12 (SQLite), its lag a parameter (a test gives a small one)."""
    flush = (
        # the persona's pending messages, once there are ``lag`` of them
        " INSERT INTO messages_short (rowid, content)"
        f" SELECT {FTS_ROWID.format(row='new')} | m.id, {SHORT_KEYS_FUNCTION}(m.content)"
        " FROM persona_counts c JOIN messages m"
        " ON m.persona = c.persona AND m.id > c.short_through"
        " WHERE c.persona = new.persona AND c.short_pending >= {lag};"
        " UPDATE persona_counts SET short_through = max(short_through,"
        " (SELECT max(id) FROM messages WHERE persona = new.persona)), short_pending = 0"
        " WHERE persona = new.persona AND short_pending >= {lag};"
    )
    return (
        Unless("ALTER TABLE persona_counts ADD COLUMN short_through INTEGER",
               done="SELECT 1 FROM pragma_table_info('persona_counts')"
               " WHERE name = 'short_through'"),
        Unless("ALTER TABLE persona_counts ADD COLUMN short_pending INTEGER NOT NULL"
               " DEFAULT 0",
               done="SELECT 1 FROM pragma_table_info('persona_counts')"
               " WHERE name = 'short_pending'"),
        # every message written so far is in the index (migration 8's triggers)
        "UPDATE persona_counts SET short_through = coalesce((SELECT max(id) FROM messages m"
        " WHERE m.persona = persona_counts.persona), 0) WHERE short_through IS NULL",
        *(f"DROP TRIGGER IF EXISTS {name}" for name in (
            "messages_fts_insert", "messages_fts_delete", "messages_fts_update",
            "messages_short_insert", "messages_short_delete", "messages_short_update",
            "messages_count_insert", "messages_count_delete", "messages_count_update",
            "messages_insert", "messages_delete", "messages_update")),
        "DROP VIEW IF EXISTS messages_short_source",
        f"CREATE VIEW messages_short_source AS SELECT {FTS_ROWID.format(row='m')} | m.id"
        f" AS fts_rowid, {SHORT_KEYS_FUNCTION}(m.content) AS content FROM messages m"
        " JOIN persona_counts c ON c.persona = m.persona WHERE m.id <= c.short_through",
        "CREATE TRIGGER messages_insert AFTER INSERT ON messages BEGIN"
        " INSERT OR IGNORE INTO persona_numbers (persona) VALUES (new.persona);"
        " INSERT INTO messages_fts (rowid, content)"
        f" VALUES ({FTS_ROWID.format(row='new')} | new.id, new.content);"
        " INSERT INTO persona_counts (persona, messages, short_through, short_pending)"
        " VALUES (new.persona, 1, 0, 1) ON CONFLICT (persona) DO UPDATE"
        " SET messages = messages + 1, short_pending = short_pending + 1;"
        f"{flush.format(lag=lag)} END",
        "CREATE TRIGGER messages_delete AFTER DELETE ON messages BEGIN"
        " INSERT INTO messages_fts (messages_fts, rowid, content)"
        f" VALUES ('delete', {FTS_ROWID.format(row='old')} | old.id, old.content);"
        " INSERT INTO messages_short (messages_short, rowid, content) SELECT 'delete',"
        f" {FTS_ROWID.format(row='old')} | old.id, {SHORT_KEYS_FUNCTION}(old.content)"
        " FROM persona_counts c WHERE c.persona = old.persona AND old.id <= c.short_through;"
        " UPDATE persona_counts SET messages = messages - 1 WHERE persona = old.persona; END",
        "CREATE TRIGGER messages_update AFTER UPDATE OF content, persona ON messages BEGIN"
        " INSERT INTO messages_fts (messages_fts, rowid, content)"
        f" VALUES ('delete', {FTS_ROWID.format(row='old')} | old.id, old.content);"
        " INSERT INTO messages_short (messages_short, rowid, content) SELECT 'delete',"
        f" {FTS_ROWID.format(row='old')} | old.id, {SHORT_KEYS_FUNCTION}(old.content)"
        " FROM persona_counts c WHERE c.persona = old.persona AND old.id <= c.short_through;"
        " UPDATE persona_counts SET messages = messages - 1"
        " WHERE persona = old.persona AND new.persona IS NOT old.persona;"
        " INSERT INTO persona_counts (persona, messages, short_through, short_pending)"
        " SELECT new.persona, 1, 0, 0 WHERE new.persona IS NOT old.persona"
        " ON CONFLICT (persona) DO UPDATE SET messages = messages + 1;"
        " INSERT OR IGNORE INTO persona_numbers (persona) VALUES (new.persona);"
        " INSERT INTO messages_fts (rowid, content)"
        f" VALUES ({FTS_ROWID.format(row='new')} | new.id, new.content);"
        # the message itself when the index holds its persona's messages up to it, then
        # every pending message of the persona (it among them otherwise)
        " INSERT INTO messages_short (rowid, content) SELECT"
        f" {FTS_ROWID.format(row='new')} | new.id, {SHORT_KEYS_FUNCTION}(new.content)"
        " FROM persona_counts c WHERE c.persona = new.persona AND new.id <= c.short_through;"
        f"{flush.format(lag=0)} END",
    )


SQLITE_ONE_TRIGGER_EACH = sqlite_one_trigger_each(SHORT_INDEX_LAG)
"""Migration 12 (SQLite): one trigger for each kind of write of a message (insert, delete,
update) instead of three, and the index of short words written every
:data:`SHORT_INDEX_LAG` messages of a persona instead of every message. Each transaction
that writes an FTS5 index writes a new segment of it (its structure, its totals, a leaf
and its b-tree entry: 5 pages and about 0.04 ms an append); a persona's messages the index
does not hold yet (``persona_counts.short_through`` is the last id it holds, and
``short_pending`` counts the messages since) are read by ``LIKE`` as the newest ones are.
The index's external content (for ``rebuild``) holds the indexed messages only. Every
statement may run again over what an earlier try left."""


SQLITE_FTS_NO_SIZES = (
    "DROP TABLE IF EXISTS messages_fts",
    "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages_fts_source',"
    " content_rowid='fts_rowid', tokenize='trigram', columnsize=0)",
    "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
    "INSERT INTO messages_fts (messages_fts) VALUES ('optimize')",
)
"""Migration 13 (SQLite): the trigram index without the size of each message
(``columnsize=0``): FTS5 keeps them for its ``bm25`` and ``rank``, which no search uses
(:mod:`saimemory.all_match` and :mod:`saimemory.any_match` rank from the texts), and each
append wrote one more row (``messages_fts_docsize``) and 1.4 pages for it. The index is
built again from the messages (about 20 s at a million) and merged into one segment, as
:meth:`~saimemory.sqlite.SQLiteStore.optimize` would; migration 12's triggers name it and
stay. Every statement may run again over what an earlier try left."""


SQLITE_DERIVED_TAGS = (
    PROVENANCE_ROWS,
    "UPDATE messages SET tags = (SELECT json_group_array(t.tag) FROM (SELECT x.tag FROM"
    " message_tags x WHERE x.message_id = messages.id ORDER BY x.pos) AS t) WHERE tags <> '[]'",
)
"""Migration 14 (SQLite): a message's ``pulse:``, ``playbook:`` and ``node:`` tags are no
longer stored; every read derives them from its columns
(:func:`~saimemory.prepare.provenance`), after its own tags. They were three of a message's
four tag rows, each with its index entries, and most of each row's JSON array of tags;
searches filtered by them test the columns instead. The rows' arrays keep the messages' own
tags. Every statement may run again over what an earlier try left."""


SQLITE_ID = "id INTEGER PRIMARY KEY AUTOINCREMENT"


SQLITE_CALL_CACHE = (
    Unless("ALTER TABLE call_records ADD COLUMN cache TEXT CHECK (cache IN ('hit', 'miss'))",
           done="SELECT 1 FROM pragma_table_info('call_records') WHERE name = 'cache'"),
    Unless("ALTER TABLE call_records ADD COLUMN tokens_saved BIGINT NOT NULL DEFAULT 0",
           done="SELECT 1 FROM pragma_table_info('call_records') WHERE name = 'tokens_saved'"),
)
"""A call record's ``cache`` and ``tokens_saved`` (applied again over columns left behind)."""
