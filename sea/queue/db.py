"""The queue's database: a PostgreSQL schema holding procrastinate's tables and SEA's own.

SEA's tables sit beside procrastinate's, in the schema the DSN names (``?schema=NAME``,
as for the store; default ``public``):

- ``sea_pulses``: one row per submitted pulse (who, what, how: ``options``, its
  ``priority``, its status, attempts, result or error). The row is the record users read
  (``sea pulses``); procrastinate's job is the plumbing that hands the pulse to a worker.
- a trigger on procrastinate's jobs (:data:`WAKE_SQL`): a job that ends while a job of
  its lock waits wakes the workers, in the transaction that ends it.
- ``sea_schedules``: a persona's playbook to run every so often (``sea schedule add``)
  and its pulses' ``priority``; ``error`` says why the workers stopped running one whose
  row cannot run (SEA366).

:func:`prepare` creates what is missing, under an advisory lock, so workers and
submitters that start together do not race on the first ``CREATE``; commands that only read
check with :func:`installed` and create nothing. Every object of the queue lives in its
schema (the connections' search path is that schema alone), so queues in two schemas of one
database work side by side.
"""

from __future__ import annotations

import re
import select
import time
from typing import Any
from urllib.parse import quote, urlencode
from weakref import WeakKeyDictionary

from sea.errors import UsageError

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_SETUP_LOCK = 0x5EA5C5  # advisory lock id held while the queue's tables are created
NO_QUEUE = "SEA392"
"""A command that only reads found no queue in the DSN's schema."""
EXTRA_HINT = "pip install -e '.[workers]' (or pip install 'sea-runtime[workers]')"

SEA_TABLES = """
CREATE TABLE IF NOT EXISTS sea_pulses (
    id text PRIMARY KEY,
    seq bigserial NOT NULL,
    persona text NOT NULL,
    persona_json jsonb NOT NULL,
    playbook text NOT NULL,
    input text NOT NULL,
    args jsonb NOT NULL DEFAULT '{}',
    status text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    job_id bigint,
    schedule_id text,
    worker text,
    result jsonb,
    error jsonb,
    submitted_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    ended_at timestamptz
);
CREATE INDEX IF NOT EXISTS sea_pulses_persona_idx ON sea_pulses (persona, seq);
CREATE INDEX IF NOT EXISTS sea_pulses_status_idx ON sea_pulses (status, seq);
CREATE TABLE IF NOT EXISTS sea_schedules (
    id text PRIMARY KEY,
    persona text NOT NULL,
    persona_json jsonb NOT NULL,
    playbook text NOT NULL,
    input text NOT NULL DEFAULT '',
    every_s double precision NOT NULL CHECK (every_s > 0),
    next_at timestamptz NOT NULL,
    last_pulse text,
    runs integer NOT NULL DEFAULT 0,
    skipped integer NOT NULL DEFAULT 0,
    error text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS sea_schedules_due_idx ON sea_schedules (next_at);
ALTER TABLE sea_pulses ADD COLUMN IF NOT EXISTS options jsonb NOT NULL DEFAULT '{}';
ALTER TABLE sea_pulses ADD COLUMN IF NOT EXISTS priority text NOT NULL DEFAULT 'user';
ALTER TABLE sea_schedules ADD COLUMN IF NOT EXISTS priority text NOT NULL
    DEFAULT 'scheduled';
"""


WAKE_CHANNEL = "procrastinate_any_queue_v1"
"""Procrastinate's workers wake on this channel (it notifies it when a job is inserted)."""
WAKE_TRIGGER = "sea_wake_after_job_v1"
WAKE_SQL = f"""
CREATE OR REPLACE FUNCTION {WAKE_TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM procrastinate_jobs
                WHERE lock = OLD.lock AND status = 'todo') THEN
        PERFORM pg_notify('{WAKE_CHANNEL}', '{{"type": "job_inserted", "job_id": 0}}');
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER {WAKE_TRIGGER} AFTER DELETE OR UPDATE OF status ON procrastinate_jobs
    FOR EACH ROW WHEN (OLD.status = 'doing' AND OLD.lock IS NOT NULL)
    EXECUTE FUNCTION {WAKE_TRIGGER}();
"""
"""When a job leaves ``doing`` (it ended, or goes back to the queue) and a job of its lock
waits, procrastinate's workers are woken as for an inserted job, in the same transaction
(the notification goes out when it commits, once the lock is free): a persona's next
pulse, which its lock held back, starts at once rather than at the workers' next poll."""


class QueueDsn:
    """A ``postgresql://`` DSN split into the server's DSN and the schema of the queue.

    Args:
        dsn: The DSN, ``?schema=NAME`` allowed.

    Raises:
        UsageError: not a PostgreSQL DSN, or a bad schema name.
    """

    def __init__(self, dsn: str) -> None:
        if not dsn.startswith(POSTGRES_SCHEMES):
            raise UsageError(
                f"the pulse queue needs PostgreSQL: give --db postgresql://... (got {dsn!r}); "
                "on one machine without PostgreSQL, `sea run` runs pulses directly",
                code="SEA361",
            )
        from saimemory.postgres import split_schema

        self.full = dsn
        self.server, schema = split_schema(dsn)
        self.schema = schema or "public"
        if not _SCHEMA_NAME.match(self.schema):
            raise UsageError(
                f"schema name {self.schema!r} must match {_SCHEMA_NAME.pattern}", code="SEA361"
            )

    @property
    def options(self) -> str:
        """The connection option whose search path is the queue's schema alone: every
        object of the queue is created and found there (with ``public`` behind it, a
        procrastinate installed in ``public`` too made its functions ambiguous, and a
        worker on another schema failed to record each job's end)."""
        return f"-c search_path={self.schema}"

    def with_search_path(self) -> str:
        """The server DSN with the queue's search path as a connection option."""
        separator = "&" if "?" in self.server else "?"
        return self.server + separator + urlencode({"options": self.options}, quote_via=quote)


IDLE_CHECK_S = 30.0
"""A pooled connection idle longer than this is checked with a round trip before use."""


def checked_pool(**kwargs: Any) -> Any:
    """The queue's connection pool (procrastinate's ``pool_factory``): procrastinate's pool,
    whose check before handing out a connection (a round trip, about eight per pulse on a
    worker) is made only when the connection may be dead (:class:`DoubtfulCheck`)."""
    import psycopg_pool

    kwargs["check"] = DoubtfulCheck()
    return psycopg_pool.AsyncConnectionPool(**kwargs)


class DoubtfulCheck:
    """A pool's check of a connection before it hands it out, made with a round trip
    (raising if the connection is dead) only when the connection was never handed out, has
    been idle for more than :data:`IDLE_CHECK_S` seconds, or its socket has something to
    read while idle (the server closed it, or said why it will): a server that closes a
    connection (a restart, an idle timeout, ``pg_terminate_backend``) makes it readable.
    Otherwise it was in use moments ago, and a connection that breaks in use is discarded
    by the pool when it comes back."""

    def __init__(self) -> None:
        self._handed_out: WeakKeyDictionary[Any, float] = WeakKeyDictionary()

    async def __call__(self, conn: Any) -> None:
        from psycopg_pool import AsyncConnectionPool

        now = time.monotonic()
        last = self._handed_out.get(conn)
        self._handed_out[conn] = now
        if last is not None and now - last < IDLE_CHECK_S and not _readable(conn):
            return
        await AsyncConnectionPool.check_connection(conn)


def _readable(conn: Any) -> bool:
    try:
        ready, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except Exception:  # closed: no socket any more
        return True
    return bool(ready)


def require_procrastinate() -> None:
    """Check that the workers extra is installed.

    Raises:
        UsageError: procrastinate (or psycopg) is missing.
    """
    try:
        import procrastinate  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            f"the pulse queue needs the workers extra: {EXTRA_HINT} ({exc})", code="SEA362"
        ) from exc


async def prepare(conn: Any, schema: str, procrastinate_sql: str) -> None:
    """Create the schema, procrastinate's tables and SEA's, whichever are missing.

    Args:
        conn: An autocommit ``psycopg.AsyncConnection`` whose search path is the schema.
        schema: The schema's name.
        procrastinate_sql: Procrastinate's schema (applied once, when its tables are absent).
    """
    from psycopg import sql

    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", [_SETUP_LOCK])
        await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        found = await (await conn.execute(
            "SELECT to_regclass(%s)", [f"{schema}.procrastinate_jobs"])).fetchone()
        if found is None or found[0] is None:
            await conn.execute(procrastinate_sql)
        await conn.execute(SEA_TABLES)
        found = await (await conn.execute(
            "SELECT 1 FROM pg_trigger WHERE tgname = %s AND tgrelid = %s::regclass",
            [WAKE_TRIGGER, f"{schema}.procrastinate_jobs"])).fetchone()
        if found is None:
            await conn.execute(WAKE_SQL)
        found = await (await conn.execute(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = %s "
            "AND table_name = 'sea_schedules' AND column_name = 'error'", [schema])).fetchone()
        if found is None:  # the table of an older version
            await conn.execute("ALTER TABLE sea_schedules ADD COLUMN error text")


async def installed(conn: Any, schema: str) -> bool:
    """Whether the queue's tables exist in ``schema`` (a read creates nothing)."""
    found = await (await conn.execute(
        "SELECT to_regclass(%s), to_regclass(%s)",
        [f"{schema}.procrastinate_jobs", f"{schema}.sea_pulses"])).fetchone()
    return found is not None and found[0] is not None and found[1] is not None
