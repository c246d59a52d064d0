"""The statements of PostgreSQL's schema migrations: the trigram and short-word indexes, the
append function, the persona counts, the lower-cased content and the statistics the
planner keeps (see :mod:`saimemory.migrations`)."""

from __future__ import annotations

from saimemory.records import CONVERSATION_TAG
from saimemory.schema_common import (
    PROVENANCE_ROWS,
    PROVENANCE_TAG,
    SHORT_KEYS_FUNCTION,
    line_columns,
)

POSTGRES_PERSONA_TRGM = (
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


POSTGRES_SHORT_WORDS = (
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


APPEND_FUNCTION = "sea_append"
"""The PostgreSQL function (in the store's schema) that appends one message."""


def postgres_append(row_tags: str | None, *, lines: bool = False) -> str:
    """The append function of migration 9, or with ``row_tags`` (an SQL expression of
    ``p_tags``) the one of migration 14, which also keeps a message's tags in its row; with
    ``lines``, the one of migration 19, which also writes a message's line and scope."""
    column, value, tag_rows, line_params = "", "", "", ""
    if row_tags is not None:
        column, value = ", tags", f", {row_tags}"
        tag_rows = " IF cardinality(p_tags) > 0 THEN"
    if lines:
        column += ", line_role, line_scope"
        value += ", p_line_role, p_line_scope"
        line_params = ", p_line_role text, p_line_scope text"
    return (
        f"CREATE OR REPLACE FUNCTION {APPEND_FUNCTION}(p_persona text, p_thread text, p_role text,"
        " p_content text, p_created_us bigint, p_pulse_id text, p_scope text, p_metadata text,"
        " p_playbook text, p_node text, p_uid text, p_tags text[], p_now_us bigint,"
        f" p_recovering boolean{line_params})"
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


POSTGRES_APPEND = (postgres_append(None),)
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


POSTGRES_PERSONA_GRAMS = (
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


POSTGRES_LOWER_CONTENT = (
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


POSTGRES_PERSONA_COUNTS = (
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


def key_functions(short_keys: str, persona_grams: str) -> tuple[str, str]:
    """The PL/pgSQL functions of the messages' index keys (:data:`SHORT_KEYS_FUNCTION`,
    :data:`PERSONA_GRAMS_FUNCTION`) with these bodies."""
    def function(head: str, body: str) -> str:
        return (f"CREATE OR REPLACE FUNCTION {head} LANGUAGE plpgsql IMMUTABLE STRICT"
                f" PARALLEL SAFE COST 1000 AS $$ {body} $$")

    return (function(f"{SHORT_KEYS_FUNCTION}(t text) RETURNS text[]", short_keys),
            function(f"{PERSONA_GRAMS_FUNCTION}(p text, t text) RETURNS bigint[]", persona_grams))


POSTGRES_KEYS_IN_PLPGSQL = key_functions(f"BEGIN RETURN {SHORT_KEYS_BODY}; END",
                                           f"BEGIN RETURN {PERSONA_GRAMS_BODY}; END")
"""Migration 13 (PostgreSQL): the two functions of the messages' index keys (migrations 8
and 10) compute the same keys in PL/pgSQL, which plans its query once a session; a SQL
function that is not inlined (these are not: a sub-select) is planned again at each
statement that calls it, so every append planned both (about 0.12 ms of an append of 0.5).
The keys are the same, so the indexes stay as they are: nothing is rebuilt. May run again."""


POSTGRES_DERIVED_TAGS = (
    "ALTER TABLE messages ADD COLUMN IF NOT EXISTS tags text[]",
    "UPDATE messages m SET tags = o.tags FROM (SELECT t.message_id, array_agg(t.tag ORDER BY"
    f" t.pos) AS tags FROM message_tags t WHERE NOT ({PROVENANCE_TAG})"
    " GROUP BY t.message_id) AS o WHERE m.id = o.message_id AND m.tags IS DISTINCT FROM o.tags",
    PROVENANCE_ROWS,
    "DROP INDEX IF EXISTS messages_persona_content_trgm",
    postgres_append("NULLIF(p_tags, '{}')"),
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


POSTGRES_OWNER_STATISTICS = (
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


GIN_INDEXES = ("messages_persona_grams", "messages_persona_short")


POSTGRES_SHORT_PENDING_LISTS = tuple(
    statement for index in GIN_INDEXES for statement in (
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


POSTGRES_CONVERSATION_INDEX = (
    "CREATE INDEX IF NOT EXISTS messages_conversation ON messages (persona, thread, id)"
    f" WHERE {CONVERSATION_ROW.replace('m.', '')}",
)
"""Migration 17 (PostgreSQL): the conversation's messages of each thread, newest last, in
an index of their own, so a page of history reads the messages themselves: through
``message_tags`` it read 51 tag rows and looked each message up by its id (265 buffers
against 99, 0.30 against 0.18 ms in the server, at a million messages). Only messages
with the conversation tag have entries (9.7 MB at a million messages, built in 0.4 s).
May run again."""


POSTGRES_LINEAR_KEYS = key_functions(
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


POSTGRES_ID = "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"


POSTGRES_CALL_CACHE = (
    "ALTER TABLE call_records ADD COLUMN IF NOT EXISTS cache TEXT"
    " CHECK (cache IN ('hit', 'miss'))",
    "ALTER TABLE call_records ADD COLUMN IF NOT EXISTS tokens_saved BIGINT NOT NULL DEFAULT 0",
)
"""A call record's ``cache`` and ``tokens_saved`` (applied again over columns left behind)."""


POSTGRES_LINES = (
    *line_columns("IF NOT EXISTS "),
    f"DROP FUNCTION IF EXISTS {APPEND_FUNCTION}(text, text, text, text, bigint, text, text,"
    " text, text, text, text, text[], bigint, boolean)",
    postgres_append("NULLIF(p_tags, '{}')", lines=True),
)
"""Migration 20 (PostgreSQL): each message's line and scope
(:data:`~saimemory.schema_common.LINES_NAME`), and the append function that writes them
(the one before, with fewer parameters, dropped). Every statement may run again."""
