"""The statements of the schema migrations that both backends run alike: messages, tags,
threads and their states, plans, the records beside messages, and the names migrations of
either backend share (see :mod:`saimemory.migrations`)."""

from __future__ import annotations

from saimemory.records import COMMITTED, LINE_ROLES, LINE_SCOPES, MAIN_LINE
from saimemory.tags import PROVENANCE_PREFIXES

THREADS = (
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


MESSAGE_COLUMNS = (
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


MESSAGE_INDEXES = (
    "CREATE INDEX messages_persona ON messages (persona, id)",
    "CREATE INDEX messages_thread ON messages (persona, thread, id)",
    "CREATE INDEX messages_pulse ON messages (persona, pulse_id, id)",
    "CREATE INDEX messages_time ON messages (persona, created_us)",
)


TAGS = (
    "CREATE TABLE message_tags ("
    " message_id BIGINT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,"
    " pos INTEGER NOT NULL,"
    " tag TEXT NOT NULL,"
    " persona TEXT NOT NULL,"
    " thread TEXT NOT NULL,"
    " PRIMARY KEY (message_id, tag))",
    "CREATE INDEX message_tags_lookup ON message_tags (persona, tag, thread, message_id)",
)


UID_INDEX = "CREATE UNIQUE INDEX messages_uid ON messages (persona, uid)"


PLANS = (
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


PLANS_NAME = "plans and each persona's current plan"


MAIN_MEMORY_NAME = "call records, pinned items and short-term memory"


def main_memory(id_column: str) -> tuple[str, ...]:
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


THREAD_STATES_NAME = "open and closed sub-threads, with their chronicles"


THREAD_STATES = (
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


SHORT_KEYS_FUNCTION = "sea_short_keys"
"""The SQL function (registered on every SQLite connection of the store) that gives a
text's short-word keys (:func:`saimemory.grams.short_keys`)."""


DERIVED_TAGS_NAME = "pulse, playbook and node tags derived, not stored"


PROVENANCE_TAG = " OR ".join(
    f"substr(tag, 1, {len(prefix)}) = '{prefix}'" for prefix in PROVENANCE_PREFIXES)
"""Whether a stored ``tag`` is one a message has from its pulse, playbook or node."""


PROVENANCE_ROWS = f"DELETE FROM message_tags WHERE {PROVENANCE_TAG}"
"""Migration 14's deletion of the tags it no longer stores."""


PERSONA_SEARCH_NAME = "full-text search per persona"


SHORT_WORDS_NAME = "an index of words shorter than three characters"

CALL_CACHE_NAME = "each model call's response cache outcome and the tokens it saved"

LINES_NAME = "each message's line and scope (SAIVerse's line_role and scope)"


def line_columns(if_missing: str) -> tuple[str, ...]:
    """The two columns of the migration named :data:`LINES_NAME`: which line wrote a message
    and how long it matters, checked against their values, the old rows main-line and
    committed (what every message was before). ``if_missing``: ``"IF NOT EXISTS "`` where
    the backend allows it (PostgreSQL), so the statement may run again."""
    roles = ", ".join(f"'{role}'" for role in LINE_ROLES)
    scopes = ", ".join(f"'{scope}'" for scope in LINE_SCOPES)
    return (
        f"ALTER TABLE messages ADD COLUMN {if_missing}line_role TEXT NOT NULL"
        f" DEFAULT '{MAIN_LINE}' CHECK (line_role IN ({roles}))",
        f"ALTER TABLE messages ADD COLUMN {if_missing}line_scope TEXT NOT NULL"
        f" DEFAULT '{COMMITTED}' CHECK (line_scope IN ({scopes}))",
    )
