"""Numbered, append-only schema migrations of both backends.

Each migration is a list of statements applied in one transaction and recorded in the
``schema_migrations`` table. Never edit or reorder a released migration: add a new one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from saimemory.errors import SchemaError
from saimemory.prepare import to_micros
from saimemory.records import CONVERSATION_TAG
from saimemory.tags import PROVENANCE_PREFIXES
from saimemory.tx import Tx


@dataclass(frozen=True, slots=True)
class Unless:
    """A statement run only when ``done`` (a query) returns no row: for a change SQL cannot
    write to apply again over itself (SQLite has no ``ADD COLUMN IF NOT EXISTS``)."""

    statement: str
    done: str


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step."""

    version: int
    name: str
    statements: tuple[str | Unless, ...]


MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_us BIGINT NOT NULL)"
)

_THREADS = (
    "CREATE TABLE threads ("
    " id TEXT PRIMARY KEY,"
    " persona TEXT NOT NULL,"
    " parent TEXT REFERENCES threads(id) ON DELETE CASCADE,"
    " title TEXT NOT NULL,"
    " is_main INTEGER NOT NULL DEFAULT 0 CHECK (is_main IN (0, 1)),"
    " created_us BIGINT NOT NULL)",
    "CREATE INDEX threads_persona ON threads (persona, created_us)",
    "CREATE UNIQUE INDEX threads_one_main ON threads (persona) WHERE is_main = 1",
)

_MESSAGE_COLUMNS = (
    " persona TEXT NOT NULL,"
    " thread TEXT NOT NULL REFERENCES threads(id),"
    " role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),"
    " content TEXT NOT NULL CHECK (content <> ''),"
    " created_us BIGINT NOT NULL,"
    " pulse_id TEXT,"
    " scope TEXT NOT NULL DEFAULT '',"
    " metadata TEXT NOT NULL DEFAULT '{}',"
    " playbook TEXT,"
    " node TEXT)"
)

_MESSAGE_INDEXES = (
    "CREATE INDEX messages_persona ON messages (persona, id)",
    "CREATE INDEX messages_thread ON messages (persona, thread, id)",
    "CREATE INDEX messages_pulse ON messages (persona, pulse_id, id)",
    "CREATE INDEX messages_time ON messages (persona, created_us)",
)

_TAGS = (
    "CREATE TABLE message_tags ("
    " message_id BIGINT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,"
    " pos INTEGER NOT NULL,"
    " tag TEXT NOT NULL,"
    " persona TEXT NOT NULL,"
    " thread TEXT NOT NULL,"
    " PRIMARY KEY (message_id, tag))",
    "CREATE INDEX message_tags_lookup ON message_tags (persona, tag, thread, message_id)",
)

_UID_INDEX = "CREATE UNIQUE INDEX messages_uid ON messages (persona, uid)"

_PLANS = (
    "CREATE TABLE plans ("
    " id TEXT PRIMARY KEY,"
    " persona TEXT NOT NULL,"
    " title TEXT NOT NULL,"
    " content TEXT NOT NULL,"
    " sources TEXT NOT NULL DEFAULT '[]',"
    " rationale TEXT NOT NULL DEFAULT '',"
    " tags TEXT NOT NULL DEFAULT '[]',"
    " status TEXT NOT NULL CHECK (status IN ('proposed', 'pending_review', 'approved',"
    " 'scheduled', 'executing', 'completed', 'aborted')),"
    " state TEXT NOT NULL DEFAULT '{}',"
    " created_us BIGINT NOT NULL,"
    " updated_us BIGINT NOT NULL,"
    " version INTEGER NOT NULL CHECK (version >= 1))",
    "CREATE INDEX plans_persona ON plans (persona, created_us)",
    "CREATE INDEX plans_status ON plans (persona, status, created_us)",
    "CREATE TABLE current_plans ("
    " persona TEXT PRIMARY KEY,"
    " plan_id TEXT NOT NULL REFERENCES plans(id) ON DELETE CASCADE,"
    " set_us BIGINT NOT NULL)",
)
_PLANS_NAME = "plans and each persona's current plan"

_MAIN_MEMORY_NAME = "call records, pinned items and short-term memory"


def _main_memory(id_column: str) -> tuple[str, ...]:
    """Migration 5 with the backend's auto-increment id column. Written with ``IF NOT
    EXISTS`` so a store whose version record was rolled back can apply it again."""
    return (
        "CREATE TABLE IF NOT EXISTS call_records ("
        f" {id_column},"
        " persona TEXT NOT NULL,"
        " kind TEXT NOT NULL CHECK (kind IN ('model', 'tool')),"
        " name TEXT NOT NULL,"
        " outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'error', 'cancelled')),"
        " pulse_id TEXT,"
        " playbook TEXT,"
        " node TEXT,"
        " pattern TEXT,"
        " model_kind TEXT,"
        " latency_s DOUBLE PRECISION NOT NULL DEFAULT 0,"
        " tokens_in BIGINT NOT NULL DEFAULT 0,"
        " tokens_out BIGINT NOT NULL DEFAULT 0,"
        " retries INTEGER NOT NULL DEFAULT 0,"
        " cost DOUBLE PRECISION NOT NULL DEFAULT 0,"
        " fallback INTEGER NOT NULL DEFAULT 0 CHECK (fallback IN (0, 1)),"
        " error TEXT,"
        " created_us BIGINT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS call_records_persona ON call_records (persona, created_us)",
        "CREATE INDEX IF NOT EXISTS call_records_time ON call_records (created_us)",
        "CREATE TABLE IF NOT EXISTS pins ("
        f" {id_column},"
        " persona TEXT NOT NULL,"
        " text TEXT NOT NULL CHECK (text <> ''),"
        " created_us BIGINT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS pins_persona ON pins (persona, id)",
        "CREATE TABLE IF NOT EXISTS short_term_memory ("
        " persona TEXT PRIMARY KEY,"
        " text TEXT NOT NULL,"
        " through_id BIGINT NOT NULL,"
        " updated_us BIGINT NOT NULL)",
    )


_THREAD_STATES_NAME = "open and closed sub-threads, with their chronicles"
_THREAD_STATES = (
    "CREATE TABLE IF NOT EXISTS thread_states ("
    " thread_id TEXT PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,"
    " persona TEXT NOT NULL,"
    " is_open INTEGER NOT NULL DEFAULT 0 CHECK (is_open IN (0, 1)),"
    " closed_us BIGINT,"
    " chronicle TEXT)",
    "CREATE INDEX IF NOT EXISTS thread_states_open ON thread_states (persona, is_open)",
)
"""Migration 6, a table of its own (not columns of ``threads``) and ``IF NOT EXISTS``, so a
store whose version record was rolled back can apply it again."""

FTS_ROWID_BITS = 40
"""SQLite's full-text index keys a message by ``(persona number << FTS_ROWID_BITS) | id``:
each persona's entries lie in one range of rowids, so a search reads only its persona's
part of each term's list, however many other personas share the file. Message ids stay
below ``2**40`` (a trillion) and persona numbers below ``2**23``."""

_FTS_ROWID = (
    f"((SELECT n FROM persona_numbers WHERE persona = {{row}}.persona) << {FTS_ROWID_BITS})"
)
_SQLITE_PERSONA_FTS = (
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
    f" VALUES ({_FTS_ROWID.format(row='new')} | new.id, new.content); END",
    "CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN"
    " INSERT INTO messages_fts (messages_fts, rowid, content)"
    f" VALUES ('delete', {_FTS_ROWID.format(row='old')} | old.id, old.content); END",
    "CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, persona ON messages BEGIN"
    " INSERT INTO messages_fts (messages_fts, rowid, content)"
    f" VALUES ('delete', {_FTS_ROWID.format(row='old')} | old.id, old.content);"
    " INSERT OR IGNORE INTO persona_numbers (persona) VALUES (new.persona);"
    " INSERT INTO messages_fts (rowid, content)"
    f" VALUES ({_FTS_ROWID.format(row='new')} | new.id, new.content); END",
    "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
)
"""Migration 7 (SQLite): the full-text index keyed by persona ranges (:data:`FTS_ROWID_BITS`).
Each persona gets a number on its first message; the index's external content is a view
that gives each message its ranged rowid, so ``rebuild`` still works. Every statement may
run again over what an earlier try left (a store whose version record was rolled back)."""

SHORT_KEYS_FUNCTION = "sea_short_keys"
"""The SQL function (registered on every SQLite connection of the store) that gives a
text's short-word keys (:func:`saimemory.grams.short_keys`)."""

_SQLITE_SHORT_WORDS = (
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
    f" ({_FTS_ROWID.format(row='new')} | new.id, {SHORT_KEYS_FUNCTION}(new.content)); END",
    "CREATE TRIGGER messages_short_delete AFTER DELETE ON messages BEGIN"
    " INSERT INTO messages_short (messages_short, rowid, content) VALUES ('delete',"
    f" {_FTS_ROWID.format(row='old')} | old.id, {SHORT_KEYS_FUNCTION}(old.content)); END",
    "CREATE TRIGGER messages_short_update AFTER UPDATE OF content, persona ON messages BEGIN"
    " INSERT INTO messages_short (messages_short, rowid, content) VALUES ('delete',"
    f" {_FTS_ROWID.format(row='old')} | old.id, {SHORT_KEYS_FUNCTION}(old.content));"
    " INSERT OR IGNORE INTO persona_numbers (persona) VALUES (new.persona);"
    " INSERT INTO messages_short (rowid, content) VALUES"
    f" ({_FTS_ROWID.format(row='new')} | new.id, {SHORT_KEYS_FUNCTION}(new.content)); END",
    "INSERT INTO messages_short (messages_short) VALUES ('rebuild')",
)
"""Migration 8 (SQLite): the index of short words (:mod:`saimemory.grams`), keyed like
the full-text index by persona ranges, its external content a view giving each message's
keys. Only rowids are kept (``detail='none'``): a short word is one key, never a phrase.
Every statement may run again over what an earlier try left."""

_POSTGRES_PERSONA_TRGM = (
    "CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public",
    "CREATE INDEX IF NOT EXISTS messages_persona_content_trgm ON messages"
    " USING gin (persona, content public.gin_trgm_ops)",
    "DROP INDEX IF EXISTS messages_content_trgm",
)
"""Migration 7 (PostgreSQL): the trigram index leads with the persona (btree_gin), so a
search reads only its persona's entries of each trigram."""

SHORT_KEYS_BODY = (
    "regexp_split_to_array(regexp_replace(lower(t), '[[:space:]]+', '', 'g'), '')"
    " || array(SELECT substr(word, i, 2)"
    " FROM regexp_split_to_table(lower(t), '[[:space:]]+') AS word,"
    " generate_series(1, char_length(word) - 1) AS i)"
)
"""What :data:`SHORT_KEYS_FUNCTION` computes of a text ``t`` (migrations 8 and 13)."""

_POSTGRES_SHORT_WORDS = (
    f"CREATE OR REPLACE FUNCTION {SHORT_KEYS_FUNCTION}(t text) RETURNS text[]"
    " LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $$"
    f" SELECT {SHORT_KEYS_BODY} $$",
    "CREATE INDEX IF NOT EXISTS messages_persona_short ON messages"
    f" USING gin (persona, {SHORT_KEYS_FUNCTION}(content))",
)
"""Migration 8 (PostgreSQL): the pieces of one and two characters of each message's text
without whitespace (lower case, as the short words' ``lower(...) LIKE`` compares; a piece
may come twice, the index keeps it once), indexed with the persona first; the function
lives in the store's schema. Its cost tells the planner to find a
short word through the index rather than by computing the pieces of each message."""

_SQLITE_PERSONA_COUNTS = (
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

_SQLITE_ROW_TAGS = (
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

_SQLITE_CONVERSATION_INDEX = (
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


def _sqlite_one_trigger_each(lag: int) -> tuple[str | Unless, ...]:
    """Migration 12 (SQLite), its lag a parameter (a test gives a small one)."""
    flush = (
        # the persona's pending messages, once there are ``lag`` of them
        " INSERT INTO messages_short (rowid, content)"
        f" SELECT {_FTS_ROWID.format(row='new')} | m.id, {SHORT_KEYS_FUNCTION}(m.content)"
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
        f"CREATE VIEW messages_short_source AS SELECT {_FTS_ROWID.format(row='m')} | m.id"
        f" AS fts_rowid, {SHORT_KEYS_FUNCTION}(m.content) AS content FROM messages m"
        " JOIN persona_counts c ON c.persona = m.persona WHERE m.id <= c.short_through",
        "CREATE TRIGGER messages_insert AFTER INSERT ON messages BEGIN"
        " INSERT OR IGNORE INTO persona_numbers (persona) VALUES (new.persona);"
        " INSERT INTO messages_fts (rowid, content)"
        f" VALUES ({_FTS_ROWID.format(row='new')} | new.id, new.content);"
        " INSERT INTO persona_counts (persona, messages, short_through, short_pending)"
        " VALUES (new.persona, 1, 0, 1) ON CONFLICT (persona) DO UPDATE"
        " SET messages = messages + 1, short_pending = short_pending + 1;"
        f"{flush.format(lag=lag)} END",
        "CREATE TRIGGER messages_delete AFTER DELETE ON messages BEGIN"
        " INSERT INTO messages_fts (messages_fts, rowid, content)"
        f" VALUES ('delete', {_FTS_ROWID.format(row='old')} | old.id, old.content);"
        " INSERT INTO messages_short (messages_short, rowid, content) SELECT 'delete',"
        f" {_FTS_ROWID.format(row='old')} | old.id, {SHORT_KEYS_FUNCTION}(old.content)"
        " FROM persona_counts c WHERE c.persona = old.persona AND old.id <= c.short_through;"
        " UPDATE persona_counts SET messages = messages - 1 WHERE persona = old.persona; END",
        "CREATE TRIGGER messages_update AFTER UPDATE OF content, persona ON messages BEGIN"
        " INSERT INTO messages_fts (messages_fts, rowid, content)"
        f" VALUES ('delete', {_FTS_ROWID.format(row='old')} | old.id, old.content);"
        " INSERT INTO messages_short (messages_short, rowid, content) SELECT 'delete',"
        f" {_FTS_ROWID.format(row='old')} | old.id, {SHORT_KEYS_FUNCTION}(old.content)"
        " FROM persona_counts c WHERE c.persona = old.persona AND old.id <= c.short_through;"
        " UPDATE persona_counts SET messages = messages - 1"
        " WHERE persona = old.persona AND new.persona IS NOT old.persona;"
        " INSERT INTO persona_counts (persona, messages, short_through, short_pending)"
        " SELECT new.persona, 1, 0, 0 WHERE new.persona IS NOT old.persona"
        " ON CONFLICT (persona) DO UPDATE SET messages = messages + 1;"
        " INSERT OR IGNORE INTO persona_numbers (persona) VALUES (new.persona);"
        " INSERT INTO messages_fts (rowid, content)"
        f" VALUES ({_FTS_ROWID.format(row='new')} | new.id, new.content);"
        # the message itself when the index holds its persona's messages up to it, then
        # every pending message of the persona (it among them otherwise)
        " INSERT INTO messages_short (rowid, content) SELECT"
        f" {_FTS_ROWID.format(row='new')} | new.id, {SHORT_KEYS_FUNCTION}(new.content)"
        " FROM persona_counts c WHERE c.persona = new.persona AND new.id <= c.short_through;"
        f"{flush.format(lag=0)} END",
    )


_SQLITE_ONE_TRIGGER_EACH = _sqlite_one_trigger_each(SHORT_INDEX_LAG)
"""Migration 12 (SQLite): one trigger for each kind of write of a message (insert, delete,
update) instead of three, and the index of short words written every
:data:`SHORT_INDEX_LAG` messages of a persona instead of every message. Each transaction
that writes an FTS5 index writes a new segment of it (its structure, its totals, a leaf
and its b-tree entry: 5 pages and about 0.04 ms an append); a persona's messages the index
does not hold yet (``persona_counts.short_through`` is the last id it holds, and
``short_pending`` counts the messages since) are read by ``LIKE`` as the newest ones are.
The index's external content (for ``rebuild``) holds the indexed messages only. Every
statement may run again over what an earlier try left."""

_SQLITE_FTS_NO_SIZES = (
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

APPEND_FUNCTION = "sea_append"
"""The PostgreSQL function (in the store's schema) that appends one message."""

def _postgres_append(row_tags: str | None) -> str:
    """The append function of migration 9, or with ``row_tags`` (an SQL expression of
    ``p_tags``) the one of migration 14, which also keeps a message's tags in its row."""
    column, value, tag_rows = "", "", ""
    if row_tags is not None:
        column, value = ", tags", f", {row_tags}"
        tag_rows = " IF cardinality(p_tags) > 0 THEN"
    return (
        f"CREATE OR REPLACE FUNCTION {APPEND_FUNCTION}(p_persona text, p_thread text, p_role text,"
        " p_content text, p_created_us bigint, p_pulse_id text, p_scope text, p_metadata text,"
        " p_playbook text, p_node text, p_uid text, p_tags text[], p_now_us bigint,"
        " p_recovering boolean)"
        " RETURNS TABLE (new_id bigint, new_thread text) LANGUAGE plpgsql AS $$"
        " DECLARE v_thread text := coalesce(p_thread, p_persona || ':main');"
        " BEGIN"
        " PERFORM pg_advisory_xact_lock(hashtextextended(p_persona, 0));"
        " IF p_recovering THEN"
        " RETURN QUERY SELECT m.id, m.thread FROM messages m WHERE m.persona = p_persona"
        " AND m.uid = p_uid AND m.created_us = p_created_us AND m.content = p_content;"
        " IF FOUND THEN RETURN; END IF;"
        " END IF;"
        " IF p_thread IS NULL THEN"
        " IF NOT EXISTS (SELECT 1 FROM threads t WHERE t.id = v_thread) THEN"
        " INSERT INTO threads (id, persona, parent, title, is_main, created_us)"
        " VALUES (v_thread, p_persona, NULL, 'main', 1, p_now_us);"
        " END IF;"
        " ELSIF NOT EXISTS (SELECT 1 FROM threads t WHERE t.id = p_thread"
        " AND t.persona = p_persona) THEN"
        " RETURN;"
        " END IF;"
        " INSERT INTO messages (persona, thread, role, content, created_us, pulse_id, scope,"
        f" metadata, playbook, node, uid{column}) VALUES (p_persona, v_thread, p_role, p_content,"
        f" p_created_us, p_pulse_id, p_scope, p_metadata, p_playbook, p_node, p_uid{value})"
        " RETURNING id INTO new_id;"
        f"{tag_rows}"
        " INSERT INTO message_tags (message_id, pos, tag, persona, thread)"
        " SELECT new_id, t.pos - 1, t.tag, p_persona, v_thread"
        " FROM unnest(p_tags) WITH ORDINALITY AS t(tag, pos);"
        f"{' END IF;' if tag_rows else ''}"
        " new_thread := v_thread;"
        " RETURN NEXT;"
        " END $$"
    )


_POSTGRES_APPEND = (_postgres_append(None),)
"""Migration 9 (PostgreSQL): one message appended by one statement, so one round trip. In
order, as a write transaction of the store does: the persona's advisory lock (the key
:meth:`~saimemory.postgres.PostgresStore._begin` takes, so ids still grow in commit order
for the persona), the thread (the main thread created when missing; no row returned when
a named thread is not the persona's), the message, its tags in order. ``p_recovering``
first looks for the message by its uid, time and text: an append retried after its
connection was lost finds the one the first try committed instead of writing it twice."""

PERSONA_GRAMS_FUNCTION = "sea_persona_grams"
"""The PostgreSQL function (in the store's schema) giving the keys of a text's trigrams in
one persona's messages."""

PERSONA_GRAMS_BODY = (
    "array(SELECT hashtextextended(substr(l, i, 3), hashtext(p))"
    " FROM lower(t) AS l, generate_series(1, char_length(l) - 2) AS i)"
)
"""What :data:`PERSONA_GRAMS_FUNCTION` computes of a persona ``p`` and a text ``t``
(migrations 10 and 13)."""

_POSTGRES_PERSONA_GRAMS = (
    f"CREATE OR REPLACE FUNCTION {PERSONA_GRAMS_FUNCTION}(p text, t text) RETURNS bigint[]"
    " LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $$"
    f" SELECT {PERSONA_GRAMS_BODY} $$",
    "CREATE INDEX IF NOT EXISTS messages_persona_grams ON messages"
    f" USING gin ({PERSONA_GRAMS_FUNCTION}(persona, content))",
)
"""Migration 10 (PostgreSQL): an index of each message's trigrams keyed by its persona (a
hash of the persona and the trigram of the lower-cased text: one key, not two), so a word
is looked up in its persona's part of each trigram's list. The trigram index of migration 7
keeps the persona and the trigrams as separate keys: a word's lookup intersected the
persona's list with every message's list of each trigram (10 ms for a rare word at 1M
messages over 100 personas). A message holding a word (``ILIKE``: the lower-cased word in
the lower-cased text; ``LIKE``: the word itself, which lower case does not touch) holds
every key of the word's trigrams, so the keys only narrow the candidates; a hash shared by
two keys only adds some. The function's cost tells the planner to find the keys through
the index rather than by computing each message's. Every statement may run again over
what an earlier try left."""

LOWER_COLUMN = "lower_content"
"""The PostgreSQL column (migration 11) holding each message's text in lower case."""

_POSTGRES_LOWER_CONTENT = (
    f"ALTER TABLE messages ADD COLUMN IF NOT EXISTS {LOWER_COLUMN} text"
    " GENERATED ALWAYS AS (lower(content)) STORED",
)
"""Migration 11 (PostgreSQL): each message's text in lower case, kept by the server (a
generated column: written with the row, never out of date). ``ILIKE`` is ``LIKE`` over
``lower()`` of the text and of the pattern (in a UTF-8 database), so
``lower_content LIKE lower(pattern)`` finds exactly the messages ``content ILIKE pattern``
finds, without lowering every text it checks (lower case costs a conversion of the whole
text to wide characters and back: three quarters of an ``ILIKE``). The table is rewritten
once, its indexes rebuilt. May run again over what an earlier try left."""

COUNT_FUNCTION = "sea_count_messages"
"""The PostgreSQL trigger function (in the store's schema) keeping ``persona_counts``."""

_POSTGRES_PERSONA_COUNTS = (
    "CREATE TABLE IF NOT EXISTS persona_counts"
    " (persona text PRIMARY KEY, messages bigint NOT NULL)",
    "DELETE FROM persona_counts",
    "INSERT INTO persona_counts (persona, messages)"
    " SELECT persona, count(*) FROM messages GROUP BY persona",
    # the store's schema kept: a trigger also runs for writers with another search_path
    f"CREATE OR REPLACE FUNCTION {COUNT_FUNCTION}() RETURNS trigger LANGUAGE plpgsql"
    " SET search_path FROM CURRENT AS $$"
    " BEGIN"
    " IF TG_OP <> 'INSERT' THEN"
    " UPDATE persona_counts c SET messages = c.messages - o.n FROM"
    " (SELECT persona, count(*) AS n FROM old_rows GROUP BY persona) AS o"
    " WHERE c.persona = o.persona;"
    " END IF;"
    " IF TG_OP <> 'DELETE' THEN"
    " INSERT INTO persona_counts AS c (persona, messages)"
    " SELECT persona, count(*) FROM new_rows GROUP BY persona"
    " ON CONFLICT (persona) DO UPDATE SET messages = c.messages + excluded.messages;"
    " END IF;"
    " RETURN NULL;"
    " END $$",
    "DROP TRIGGER IF EXISTS messages_count_insert ON messages",
    "DROP TRIGGER IF EXISTS messages_count_delete ON messages",
    "DROP TRIGGER IF EXISTS messages_count_update ON messages",
    "CREATE TRIGGER messages_count_insert AFTER INSERT ON messages"
    f" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {COUNT_FUNCTION}()",
    "CREATE TRIGGER messages_count_delete AFTER DELETE ON messages"
    f" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION {COUNT_FUNCTION}()",
    "CREATE TRIGGER messages_count_update AFTER UPDATE ON messages"
    " REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows"
    f" FOR EACH STATEMENT EXECUTE FUNCTION {COUNT_FUNCTION}()",
)
"""Migration 12 (PostgreSQL): each persona's number of messages, as SQLite's migration 9
keeps it, by triggers once a statement (an append, a bulk insert, a ``COPY``, a deletion)
over the rows it wrote, in the transaction that writes them; a persona's writers are
serialised by its advisory lock, so they never race on its row. The ``any`` search weighs
words by it; counting the persona's entries of an index instead read up to
:data:`~saimemory.any_match.COLLECTION_CAP` of them at every search (1 to 2 ms at 10,000).
Every statement may run again over what an earlier try left."""

def _key_functions(short_keys: str, persona_grams: str) -> tuple[str, str]:
    """The PL/pgSQL functions of the messages' index keys (:data:`SHORT_KEYS_FUNCTION`,
    :data:`PERSONA_GRAMS_FUNCTION`) with these bodies."""
    def function(head: str, body: str) -> str:
        return (f"CREATE OR REPLACE FUNCTION {head} LANGUAGE plpgsql IMMUTABLE STRICT"
                f" PARALLEL SAFE COST 1000 AS $$ {body} $$")

    return (function(f"{SHORT_KEYS_FUNCTION}(t text) RETURNS text[]", short_keys),
            function(f"{PERSONA_GRAMS_FUNCTION}(p text, t text) RETURNS bigint[]", persona_grams))


_POSTGRES_KEYS_IN_PLPGSQL = _key_functions(f"BEGIN RETURN {SHORT_KEYS_BODY}; END",
                                           f"BEGIN RETURN {PERSONA_GRAMS_BODY}; END")
"""Migration 13 (PostgreSQL): the two functions of the messages' index keys (migrations 8
and 10) compute the same keys in PL/pgSQL, which plans its query once a session; a SQL
function that is not inlined (these are not: a sub-select) is planned again at each
statement that calls it, so every append planned both (about 0.12 ms of an append of 0.5).
The keys are the same, so the indexes stay as they are: nothing is rebuilt. May run again."""

_DERIVED_TAGS_NAME = "pulse, playbook and node tags derived, not stored"

_PROVENANCE_TAG = " OR ".join(
    f"substr(tag, 1, {len(prefix)}) = '{prefix}'" for prefix in PROVENANCE_PREFIXES)
"""Whether a stored ``tag`` is one a message has from its pulse, playbook or node."""
_PROVENANCE_ROWS = f"DELETE FROM message_tags WHERE {_PROVENANCE_TAG}"
"""Migration 14's deletion of the tags it no longer stores."""

_SQLITE_DERIVED_TAGS = (
    _PROVENANCE_ROWS,
    "UPDATE messages SET tags = (SELECT json_group_array(t.tag) FROM (SELECT x.tag FROM"
    " message_tags x WHERE x.message_id = messages.id ORDER BY x.pos) AS t) WHERE tags <> '[]'",
)
"""Migration 14 (SQLite): a message's ``pulse:``, ``playbook:`` and ``node:`` tags are no
longer stored; every read derives them from its columns
(:func:`~saimemory.prepare.provenance`), after its own tags. They were three of a message's
four tag rows, each with its index entries, and most of each row's JSON array of tags;
searches filtered by them test the columns instead. The rows' arrays keep the messages' own
tags. Every statement may run again over what an earlier try left."""

_POSTGRES_DERIVED_TAGS = (
    "ALTER TABLE messages ADD COLUMN IF NOT EXISTS tags text[]",
    "UPDATE messages m SET tags = o.tags FROM (SELECT t.message_id, array_agg(t.tag ORDER BY"
    f" t.pos) AS tags FROM message_tags t WHERE NOT ({_PROVENANCE_TAG})"
    " GROUP BY t.message_id) AS o WHERE m.id = o.message_id AND m.tags IS DISTINCT FROM o.tags",
    _PROVENANCE_ROWS,
    "DROP INDEX IF EXISTS messages_persona_content_trgm",
    _postgres_append("NULLIF(p_tags, '{}')"),
)
"""Migration 14 (PostgreSQL): as SQLite's, a message's ``pulse:``, ``playbook:`` and
``node:`` tags are derived on every read, not stored (three tag rows an append, with their
index entries; at a million messages, 760 of the 808 MB of ``message_tags`` and its
indexes). Its own
tags, few and mostly none, are also kept in its row (``tags``, NULL for none; the append
function writes them there too), so a read of messages reads no other table: history read
each message's tags by an index probe. And the trigram index of migration 7 goes:
migration 10's keys find every word a search looks up by its trigrams, and the planner's
estimates of a pattern come from the texts' statistics, not from an index, so the index
only cost each append its entries (a fifth of a PostgreSQL append's work in the server)
and a million messages 110 MB. The ``pg_trgm`` extension stays. Every statement may run
again over what an earlier try left."""

_POSTGRES_OWNER_STATISTICS = (
    "CREATE STATISTICS IF NOT EXISTS messages_owner (dependencies)"
    " ON persona, thread FROM messages",
    "CREATE STATISTICS IF NOT EXISTS message_tags_owner (dependencies)"
    " ON persona, thread FROM message_tags",
    "ANALYZE messages (persona, thread)",
    "ANALYZE message_tags (persona, thread)",
)
"""Migration 15 (PostgreSQL): the planner learns that a thread belongs to one persona. It
took the two conditions of ``persona = ? AND thread = ?`` as independent and multiplied
their selectivities, so over 100 personas it expected a hundredth of a persona's
conversation: 20 tagged rows for 2,005 at a million messages. A statement planned with its
values (psycopg's first five executions on each connection, or any statement never
prepared) then read and sorted all 2,005 rows for the 50 of a page of history (12 ms
instead of 0.6 in the server). Functional-dependency statistics on the two columns correct
it; the ``ANALYZE`` of only these columns builds them at once (0.3 s at a million
messages) and leaves the texts' statistics as they were. May run again."""

GIN_PENDING_KB = 128
"""The most a PostgreSQL search index of messages keeps in its pending list (migration 16)."""

_GIN_INDEXES = ("messages_persona_grams", "messages_persona_short")

_POSTGRES_SHORT_PENDING_LISTS = tuple(
    statement for index in _GIN_INDEXES for statement in (
        f"ALTER INDEX {index} SET (gin_pending_list_limit = {GIN_PENDING_KB})",
        f"SELECT gin_clean_pending_list('{index}'::regclass)",
    ))
"""Migration 16 (PostgreSQL): the two GIN indexes of the messages' words (migrations 8 and
10) keep at most :data:`GIN_PENDING_KB` kB of new entries in their pending lists, not the
server's 4 MB. A GIN index adds an insert's entries to that unsorted list and merges them
into the index later; every search of the index reads the whole list first, and the
append that finds it full merges all of it. At a million messages, with 236 pending pages
a search of a rare word took 2.5 ms instead of 1.3 and an any-words search 1.2 ms more,
while the append that merged a full list took 39 ms. With 128 kB the list's reading costs
searches under 0.1 ms, an append costs about 0.07 ms more on average and at most about
5 ms. Merging at the start empties the lists the old limit let grow, so no user's append
merges them. May run again."""

CONVERSATION_ROW = f"m.tags @> '{{{CONVERSATION_TAG}}}'::text[]"
"""Whether PostgreSQL's message ``m`` has the conversation tag, in its row (migration 14),
as migration 17's index states it: a query naming it so can use that index."""

_POSTGRES_CONVERSATION_INDEX = (
    "CREATE INDEX IF NOT EXISTS messages_conversation ON messages (persona, thread, id)"
    f" WHERE {CONVERSATION_ROW.replace('m.', '')}",
)
"""Migration 17 (PostgreSQL): the conversation's messages of each thread, newest last, in
an index of their own, so a page of history reads the messages themselves: through
``message_tags`` it read 51 tag rows and looked each message up by its id (265 buffers
against 99, 0.30 against 0.18 ms in the server, at a million messages). Only messages
with the conversation tag have entries (9.7 MB at a million messages, built in 0.4 s).
May run again."""

_POSTGRES_LINEAR_KEYS = _key_functions(
    "DECLARE l text := lower(t);"
    " keys text[] := regexp_split_to_array(regexp_replace(l, '[[:space:]]+', '', 'g'), '');"
    " word text; chars text[];"
    " BEGIN"
    " FOR word IN SELECT regexp_split_to_table(l, '[[:space:]]+') LOOP"
    " chars := string_to_array(word, NULL);"
    " FOR i IN 1 .. coalesce(array_length(chars, 1), 0) - 1 LOOP"
    " keys := keys || (chars[i] || chars[i + 1]);"
    " END LOOP;"
    " END LOOP;"
    " RETURN keys;"
    " END",
    "DECLARE chars text[] := string_to_array(lower(t), NULL); seed integer := hashtext(p);"
    " keys bigint[] := '{}';"
    " BEGIN"
    " FOR i IN 1 .. coalesce(array_length(chars, 1), 0) - 2 LOOP"
    " keys := keys || hashtextextended(chars[i] || chars[i + 1] || chars[i + 2], seed);"
    " END LOOP;"
    " RETURN keys;"
    " END",
)
"""Migration 18 (PostgreSQL): the two functions of the messages' index keys take time in
proportion to the text, not to its square. They cut the text with ``substr(t, i, n)`` at
each position, and ``substr`` walks a UTF-8 text from its start to find a position: the
keys of a 9,600-character message took 330 ms, of 28,800 characters 2.9 s, and a message
of a million characters (a tool's result may be that long) would have held its persona's
lock for about half an hour. They now split the text into its characters once (an array
PL/pgSQL indexes in constant time) and join neighbours: 2 ms for 9,600 characters, 0.23 s
for 960,000, and half the time for a message of a hundred. The keys are the same, in the
same order (a property test holds them to the first functions'), so no index is rebuilt.
May run again."""

_PERSONA_SEARCH_NAME = "full-text search per persona"
_SHORT_WORDS_NAME = "an index of words shorter than three characters"

_SQLITE_ID = "id INTEGER PRIMARY KEY AUTOINCREMENT"
_POSTGRES_ID = "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"

SQLITE_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "threads, messages, tags",
        _THREADS
        + ("CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT," + _MESSAGE_COLUMNS,)
        + _MESSAGE_INDEXES
        + _TAGS,
    ),
    Migration(
        2,
        "full-text search (FTS5, trigram tokenizer)",
        (
            "CREATE VIRTUAL TABLE messages_fts USING fts5("
            " content, content='messages', content_rowid='id', tokenize='trigram')",
            "CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN"
            " INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content); END",
            "CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN"
            " INSERT INTO messages_fts (messages_fts, rowid, content)"
            " VALUES ('delete', old.id, old.content); END",
            "CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN"
            " INSERT INTO messages_fts (messages_fts, rowid, content)"
            " VALUES ('delete', old.id, old.content);"
            " INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content); END",
            "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
        ),
    ),
    Migration(
        3,
        "message uid (stable identity for export and import)",
        (
            "ALTER TABLE messages ADD COLUMN uid TEXT NOT NULL DEFAULT ''",
            "UPDATE messages SET uid = lower(hex(randomblob(16)))",
            _UID_INDEX,
        ),
    ),
    Migration(4, _PLANS_NAME, _PLANS),
    Migration(5, _MAIN_MEMORY_NAME, _main_memory(_SQLITE_ID)),
    Migration(6, _THREAD_STATES_NAME, _THREAD_STATES),
    Migration(7, _PERSONA_SEARCH_NAME, _SQLITE_PERSONA_FTS),
    Migration(8, _SHORT_WORDS_NAME, _SQLITE_SHORT_WORDS),
    Migration(9, "each persona's number of messages", _SQLITE_PERSONA_COUNTS),
    Migration(10, "each message's tags in its row", _SQLITE_ROW_TAGS),
    Migration(11, "an index of the conversation tag only", _SQLITE_CONVERSATION_INDEX),
    Migration(12, "one trigger a write, short words indexed in batches",
              _SQLITE_ONE_TRIGGER_EACH),
    Migration(13, "the trigram index without sizes", _SQLITE_FTS_NO_SIZES),
    Migration(14, _DERIVED_TAGS_NAME, _SQLITE_DERIVED_TAGS),
)

POSTGRES_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "threads, messages, tags",
        _THREADS
        + (
            "CREATE TABLE messages (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
            + _MESSAGE_COLUMNS,
        )
        + _MESSAGE_INDEXES
        + _TAGS,
    ),
    Migration(
        2,
        "full-text search (pg_trgm)",
        (
            "CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public",
            "CREATE INDEX messages_content_trgm ON messages"
            " USING gin (content public.gin_trgm_ops)",
        ),
    ),
    Migration(
        3,
        "message uid (stable identity for export and import)",
        (
            "ALTER TABLE messages ADD COLUMN uid TEXT",
            "UPDATE messages SET uid = replace(gen_random_uuid()::text, '-', '')",
            "ALTER TABLE messages ALTER COLUMN uid SET NOT NULL",
            _UID_INDEX,
        ),
    ),
    Migration(4, _PLANS_NAME, _PLANS),
    Migration(5, _MAIN_MEMORY_NAME, _main_memory(_POSTGRES_ID)),
    Migration(6, _THREAD_STATES_NAME, _THREAD_STATES),
    Migration(7, _PERSONA_SEARCH_NAME, _POSTGRES_PERSONA_TRGM),
    Migration(8, _SHORT_WORDS_NAME, _POSTGRES_SHORT_WORDS),
    Migration(9, "appending a message in one statement", _POSTGRES_APPEND),
    Migration(10, "trigrams keyed by persona", _POSTGRES_PERSONA_GRAMS),
    Migration(11, "each message's text in lower case", _POSTGRES_LOWER_CONTENT),
    Migration(12, "each persona's number of messages", _POSTGRES_PERSONA_COUNTS),
    Migration(13, "the index keys' functions planned once a session", _POSTGRES_KEYS_IN_PLPGSQL),
    Migration(14, _DERIVED_TAGS_NAME, _POSTGRES_DERIVED_TAGS),
    Migration(15, "a thread's persona known to the planner", _POSTGRES_OWNER_STATISTICS),
    Migration(16, "short pending lists of the search indexes", _POSTGRES_SHORT_PENDING_LISTS),
    Migration(17, "an index of each thread's conversation", _POSTGRES_CONVERSATION_INDEX),
    Migration(18, "index keys in linear time", _POSTGRES_LINEAR_KEYS),
)


def current_version(tx: Tx, known: tuple[Migration, ...], where: str) -> int:
    """The schema version recorded in the store; :class:`SchemaError` when it is newer than
    ``known`` or not a sequence 1..n (the store is then left untouched)."""
    versions = [int(row[0]) for row in
                tx.fetch("SELECT version FROM schema_migrations ORDER BY version")]
    latest = known[-1].version
    if versions and max(versions) > latest:
        raise SchemaError(
            f"{where} has schema version {max(versions)}, newer than this SAIMemory "
            f"(knows up to {latest}); upgrade sea-runtime to open it. It was not changed."
        )
    if versions != list(range(1, len(versions) + 1)):
        raise SchemaError(
            f"{where} records schema versions {versions}, not a sequence 1..n; "
            "the store looks corrupt. It was not changed."
        )
    return len(versions)


def upgrade(tx: Tx, known: tuple[Migration, ...], where: str) -> None:
    """Apply, inside ``tx``, every migration of ``known`` the store does not have yet."""
    tx.run(MIGRATIONS_TABLE)
    for migration in known[current_version(tx, known, where):]:
        for statement in migration.statements:
            if isinstance(statement, str):
                tx.run(statement)
            elif not tx.fetch(statement.done):
                tx.run(statement.statement)
        tx.run(
            "INSERT INTO schema_migrations (version, name, applied_us) VALUES (?, ?, ?)",
            (migration.version, migration.name, to_micros(datetime.now(UTC))),
        )
