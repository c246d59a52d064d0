"""Numbered, append-only schema migrations of both backends.

Each migration is a list of statements applied in one transaction and recorded in the
``schema_migrations`` table. Never edit or reorder a released migration: add a new one.

How they are kept and applied is :mod:`saimemory.migration_runner`'s; their statements are
:mod:`saimemory.schema_common`'s (both backends), :mod:`saimemory.schema_sqlite`'s and
:mod:`saimemory.schema_postgres`'s. This module lists each backend's migrations in order.
"""

from __future__ import annotations

from saimemory.migration_runner import MIGRATIONS_TABLE, Migration, Unless, current_version, upgrade
from saimemory.schema_common import (
    CALL_CACHE_NAME,
    DERIVED_TAGS_NAME,
    LINES_NAME,
    MAIN_MEMORY_NAME,
    MESSAGE_COLUMNS,
    MESSAGE_INDEXES,
    PERSONA_SEARCH_NAME,
    PLANS,
    PLANS_NAME,
    SHORT_KEYS_FUNCTION,
    SHORT_WORDS_NAME,
    TAGS,
    THREAD_STATES,
    THREAD_STATES_NAME,
    THREADS,
    UID_INDEX,
    line_columns,
    main_memory,
)
from saimemory.schema_postgres import (
    APPEND_FUNCTION,
    CONVERSATION_ROW,
    COUNT_FUNCTION,
    GIN_PENDING_KB,
    LOWER_COLUMN,
    PERSONA_GRAMS_BODY,
    PERSONA_GRAMS_FUNCTION,
    POSTGRES_APPEND,
    POSTGRES_CALL_CACHE,
    POSTGRES_CONVERSATION_INDEX,
    POSTGRES_DERIVED_TAGS,
    POSTGRES_ID,
    POSTGRES_KEYS_IN_PLPGSQL,
    POSTGRES_LINEAR_KEYS,
    POSTGRES_LINES,
    POSTGRES_LOWER_CONTENT,
    POSTGRES_OWNER_STATISTICS,
    POSTGRES_PERSONA_COUNTS,
    POSTGRES_PERSONA_GRAMS,
    POSTGRES_PERSONA_TRGM,
    POSTGRES_SHORT_PENDING_LISTS,
    POSTGRES_SHORT_WORDS,
    SHORT_KEYS_BODY,
)
from saimemory.schema_sqlite import (
    FTS_ROWID_BITS,
    SHORT_INDEX_LAG,
    SQLITE_CALL_CACHE,
    SQLITE_CONVERSATION_INDEX,
    SQLITE_DERIVED_TAGS,
    SQLITE_FTS_NO_SIZES,
    SQLITE_ID,
    SQLITE_ONE_TRIGGER_EACH,
    SQLITE_PERSONA_COUNTS,
    SQLITE_PERSONA_FTS,
    SQLITE_ROW_TAGS,
    SQLITE_SHORT_WORDS,
)

SQLITE_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "threads, messages, tags",
        THREADS
        + ("CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT," + MESSAGE_COLUMNS,)
        + MESSAGE_INDEXES
        + TAGS,
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
            UID_INDEX,
        ),
    ),
    Migration(4, PLANS_NAME, PLANS),
    Migration(5, MAIN_MEMORY_NAME, main_memory(SQLITE_ID)),
    Migration(6, THREAD_STATES_NAME, THREAD_STATES),
    Migration(7, PERSONA_SEARCH_NAME, SQLITE_PERSONA_FTS),
    Migration(8, SHORT_WORDS_NAME, SQLITE_SHORT_WORDS),
    Migration(9, "each persona's number of messages", SQLITE_PERSONA_COUNTS),
    Migration(10, "each message's tags in its row", SQLITE_ROW_TAGS),
    Migration(11, "an index of the conversation tag only", SQLITE_CONVERSATION_INDEX),
    Migration(12, "one trigger a write, short words indexed in batches",
              SQLITE_ONE_TRIGGER_EACH),
    Migration(13, "the trigram index without sizes", SQLITE_FTS_NO_SIZES),
    Migration(14, DERIVED_TAGS_NAME, SQLITE_DERIVED_TAGS),
    Migration(15, CALL_CACHE_NAME, SQLITE_CALL_CACHE),
    Migration(16, LINES_NAME, tuple(
        Unless(statement, f"SELECT 1 FROM pragma_table_info('messages') WHERE name = '{name}'")
        for statement, name in zip(line_columns(""), ("line_role", "line_scope"), strict=True)
    )),
)


POSTGRES_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "threads, messages, tags",
        THREADS
        + (
            "CREATE TABLE messages (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
            + MESSAGE_COLUMNS,
        )
        + MESSAGE_INDEXES
        + TAGS,
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
            UID_INDEX,
        ),
    ),
    Migration(4, PLANS_NAME, PLANS),
    Migration(5, MAIN_MEMORY_NAME, main_memory(POSTGRES_ID)),
    Migration(6, THREAD_STATES_NAME, THREAD_STATES),
    Migration(7, PERSONA_SEARCH_NAME, POSTGRES_PERSONA_TRGM),
    Migration(8, SHORT_WORDS_NAME, POSTGRES_SHORT_WORDS),
    Migration(9, "appending a message in one statement", POSTGRES_APPEND),
    Migration(10, "trigrams keyed by persona", POSTGRES_PERSONA_GRAMS),
    Migration(11, "each message's text in lower case", POSTGRES_LOWER_CONTENT),
    Migration(12, "each persona's number of messages", POSTGRES_PERSONA_COUNTS),
    Migration(13, "the index keys' functions planned once a session", POSTGRES_KEYS_IN_PLPGSQL),
    Migration(14, DERIVED_TAGS_NAME, POSTGRES_DERIVED_TAGS),
    Migration(15, "a thread's persona known to the planner", POSTGRES_OWNER_STATISTICS),
    Migration(16, "short pending lists of the search indexes", POSTGRES_SHORT_PENDING_LISTS),
    Migration(17, "an index of each thread's conversation", POSTGRES_CONVERSATION_INDEX),
    Migration(18, "index keys in linear time", POSTGRES_LINEAR_KEYS),
    Migration(19, CALL_CACHE_NAME, POSTGRES_CALL_CACHE),
    Migration(20, LINES_NAME, POSTGRES_LINES),
)

__all__ = [
    "APPEND_FUNCTION",
    "CONVERSATION_ROW",
    "COUNT_FUNCTION",
    "FTS_ROWID_BITS",
    "GIN_PENDING_KB",
    "LOWER_COLUMN",
    "MIGRATIONS_TABLE",
    "Migration",
    "PERSONA_GRAMS_BODY",
    "PERSONA_GRAMS_FUNCTION",
    "POSTGRES_MIGRATIONS",
    "SHORT_INDEX_LAG",
    "SHORT_KEYS_BODY",
    "SHORT_KEYS_FUNCTION",
    "SQLITE_MIGRATIONS",
    "Unless",
    "current_version",
    "upgrade",
]
