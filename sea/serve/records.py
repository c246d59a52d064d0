"""The server's rows: personas, conversations (LangGraph threads) and runs, in ServerDB.

A *persona* row names a persona the server serves and the tenant it belongs to. A
*conversation* is one LangGraph thread: a conversation of a persona, held in SAIMemory as a
sub-thread of the persona (``memory_thread``) so that its history is its own while pins,
search, plans and the short-term memory stay the persona's. A *run* is one drive of a pulse
in a conversation (the first run of a pulse has the pulse's id; a resume is a run of its
own, linked to the same pulse). Rows live in the store's database, so lists survive a
restart and every server process on one database sees the same ones.

Calls are blocking (the server runs them in a worker thread).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import orjson

from sea.serve.db import Row, ServerDB

DDL = (
    """CREATE TABLE IF NOT EXISTS sea_personas (
        id TEXT PRIMARY KEY, tenant TEXT NOT NULL, name TEXT NOT NULL,
        system_prompt TEXT NOT NULL, metadata TEXT NOT NULL, created_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS sea_threads (
        thread_id TEXT PRIMARY KEY, persona TEXT NOT NULL, tenant TEXT NOT NULL,
        memory_thread TEXT NOT NULL, metadata TEXT NOT NULL, status TEXT NOT NULL,
        waiting_pulse TEXT, interrupts TEXT NOT NULL, created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS sea_threads_tenant ON sea_threads (tenant, updated_at)",
    """CREATE TABLE IF NOT EXISTS sea_runs (
        run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, pulse_id TEXT NOT NULL,
        persona TEXT NOT NULL, tenant TEXT NOT NULL, assistant TEXT NOT NULL,
        playbook TEXT NOT NULL, status TEXT NOT NULL, metadata TEXT NOT NULL,
        kwargs TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        result TEXT, error TEXT)""",
    "CREATE INDEX IF NOT EXISTS sea_runs_thread ON sea_runs (thread_id, created_at)",
    "CREATE INDEX IF NOT EXISTS sea_runs_pulse ON sea_runs (pulse_id, created_at)",
)


def now() -> str:
    """The time now, UTC, ISO 8601."""
    return datetime.now(UTC).isoformat()


def _dump(value: Any) -> str:
    return orjson.dumps(value).decode()


def _load(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


@dataclass(frozen=True, slots=True)
class PersonaRow:
    """A persona the server serves."""

    id: str
    tenant: str
    name: str
    system_prompt: str
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """A conversation (a LangGraph thread) of a persona."""

    thread_id: str
    persona: str
    tenant: str
    memory_thread: str
    metadata: dict[str, Any]
    status: str = "idle"
    """idle, busy (a run is under way), interrupted (a pulse waits for an answer), error."""
    waiting_pulse: str | None = None
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class RunRow:
    """One run: a drive of a pulse in a conversation."""

    run_id: str
    thread_id: str
    pulse_id: str
    persona: str
    tenant: str
    assistant: str
    playbook: str
    status: str
    """pending, running, success (ended, or ended waiting), error, interrupted (cancelled)."""
    metadata: dict[str, Any]
    kwargs: dict[str, Any]
    created_at: str = ""
    updated_at: str = ""
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


def _persona(row: Row) -> PersonaRow:
    return PersonaRow(row[0], row[1], row[2], row[3], _load(row[4]), row[5])


def _thread(row: Row) -> ThreadRow:
    return ThreadRow(row[0], row[1], row[2], row[3], _load(row[4]), row[5], row[6],
                     _load(row[7]), row[8], row[9])


def _run(row: Row) -> RunRow:
    return RunRow(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7],
                  _load(row[8]), _load(row[9]), row[10], row[11], _load(row[12]),
                  _load(row[13]))


_THREAD_COLUMNS = ("thread_id, persona, tenant, memory_thread, metadata, status, "
                   "waiting_pulse, interrupts, created_at, updated_at")
_RUN_COLUMNS = ("run_id, thread_id, pulse_id, persona, tenant, assistant, playbook, status, "
                "metadata, kwargs, created_at, updated_at, result, error")


class Records:
    """The server's persona, conversation and run rows.

    Args:
        db: The server's database (the tables are created when missing).
    """

    def __init__(self, db: ServerDB) -> None:
        self.db = db
        db.create(DDL)

    # -- personas ---------------------------------------------------------------------------

    def add_persona(self, persona: PersonaRow) -> PersonaRow:
        """Store a new persona (the caller checked it does not exist)."""
        made = replace(persona, created_at=persona.created_at or now())
        self.db.execute(
            "INSERT INTO sea_personas (id, tenant, name, system_prompt, metadata, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (made.id, made.tenant, made.name, made.system_prompt, _dump(made.metadata),
             made.created_at))
        return made

    def ensure_persona(self, persona: PersonaRow) -> PersonaRow:
        """The stored persona of ``persona.id``, stored first when missing."""
        found = self.persona(persona.id)
        return found if found is not None else self.add_persona(persona)

    def persona(self, persona_id: str) -> PersonaRow | None:
        """The persona ``persona_id``, or None."""
        row = self.db.fetch_one(
            "SELECT id, tenant, name, system_prompt, metadata, created_at FROM sea_personas "
            "WHERE id = ?", (persona_id,))
        return None if row is None else _persona(row)

    def personas(self, tenant: str, *, limit: int = 100, offset: int = 0) -> list[PersonaRow]:
        """The personas of ``tenant``, by id."""
        rows = self.db.fetch(
            "SELECT id, tenant, name, system_prompt, metadata, created_at FROM sea_personas "
            "WHERE tenant = ? ORDER BY id LIMIT ? OFFSET ?", (tenant, limit, offset))
        return [_persona(row) for row in rows]

    # -- conversations ----------------------------------------------------------------------

    def add_thread(self, thread: ThreadRow) -> ThreadRow:
        """Store a new conversation."""
        at = now()
        made = replace(thread, created_at=at, updated_at=at)
        self.db.execute(
            f"INSERT INTO sea_threads ({_THREAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (made.thread_id, made.persona, made.tenant, made.memory_thread,
             _dump(made.metadata), made.status, made.waiting_pulse, _dump(made.interrupts),
             made.created_at, made.updated_at))
        return made

    def thread(self, thread_id: str) -> ThreadRow | None:
        """The conversation ``thread_id``, or None."""
        row = self.db.fetch_one(
            f"SELECT {_THREAD_COLUMNS} FROM sea_threads WHERE thread_id = ?", (thread_id,))
        return None if row is None else _thread(row)

    def threads(self, tenant: str, *, status: str | None = None, limit: int = 10,
                offset: int = 0) -> list[ThreadRow]:
        """The conversations of ``tenant``, newest change first (``status``: only those)."""
        sql = f"SELECT {_THREAD_COLUMNS} FROM sea_threads WHERE tenant = ?"
        params: list[Any] = [tenant]
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        sql += " ORDER BY updated_at DESC, thread_id LIMIT ? OFFSET ?"
        rows = self.db.fetch(sql, (*params, limit, offset))
        return [_thread(row) for row in rows]

    def update_thread(self, thread_id: str, **changes: Any) -> ThreadRow | None:
        """Change some fields of a conversation (``metadata``, ``status``,
        ``waiting_pulse``, ``interrupts``); its update time is now."""
        columns = [name for name in ("metadata", "status", "waiting_pulse", "interrupts")
                   if name in changes]
        values = [_dump(changes[name]) if name in ("metadata", "interrupts") else changes[name]
                  for name in columns]
        assignments = ", ".join(f"{name} = ?" for name in (*columns, "updated_at"))
        self.db.execute(f"UPDATE sea_threads SET {assignments} WHERE thread_id = ?",
                        (*values, now(), thread_id))
        return self.thread(thread_id)

    def delete_thread(self, thread_id: str) -> bool:
        """Remove a conversation's row and its runs' rows (its memory stays)."""
        with self.db.transaction():
            self.db.execute("DELETE FROM sea_runs WHERE thread_id = ?", (thread_id,))
            gone = self.db.execute("DELETE FROM sea_threads WHERE thread_id = ?", (thread_id,))
        return gone.rowcount > 0

    # -- runs ---------------------------------------------------------------------------------

    def add_run(self, run: RunRow) -> RunRow:
        """Store a new run."""
        at = now()
        made = replace(run, created_at=at, updated_at=at)
        self.db.execute(
            f"INSERT INTO sea_runs ({_RUN_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (made.run_id, made.thread_id, made.pulse_id, made.persona, made.tenant,
             made.assistant, made.playbook, made.status, _dump(made.metadata),
             _dump(made.kwargs), made.created_at, made.updated_at,
             None if made.result is None else _dump(made.result),
             None if made.error is None else _dump(made.error)))
        return made

    def run(self, run_id: str) -> RunRow | None:
        """The run ``run_id``, or None."""
        row = self.db.fetch_one(f"SELECT {_RUN_COLUMNS} FROM sea_runs WHERE run_id = ?",
                                (run_id,))
        return None if row is None else _run(row)

    def runs(self, thread_id: str, *, status: str | None = None, limit: int = 10,
             offset: int = 0) -> list[RunRow]:
        """The runs of a conversation, newest first."""
        sql = f"SELECT {_RUN_COLUMNS} FROM sea_runs WHERE thread_id = ?"
        params: list[Any] = [thread_id]
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        sql += " ORDER BY created_at DESC, run_id LIMIT ? OFFSET ?"
        return [_run(row) for row in self.db.fetch(sql, (*params, limit, offset))]

    def pulse_runs(self, pulse_id: str) -> list[RunRow]:
        """The runs of one pulse, oldest first."""
        rows = self.db.fetch(
            f"SELECT {_RUN_COLUMNS} FROM sea_runs WHERE pulse_id = ? ORDER BY created_at",
            (pulse_id,))
        return [_run(row) for row in rows]

    def pulses(self, tenant: str, *, persona: str | None = None, limit: int = 50) -> list[RunRow]:
        """The newest runs of ``tenant`` (of one persona), newest first."""
        sql = f"SELECT {_RUN_COLUMNS} FROM sea_runs WHERE tenant = ?"
        params: list[Any] = [tenant]
        if persona is not None:
            sql += " AND persona = ?"
            params.append(persona)
        sql += " ORDER BY created_at DESC LIMIT ?"
        return [_run(row) for row in self.db.fetch(sql, (*params, limit))]

    def update_run(self, run_id: str, **changes: Any) -> None:
        """Change a run's ``status``, ``result`` or ``error``; its update time is now."""
        columns = [name for name in ("status", "result", "error") if name in changes]
        values = [changes[name] if name == "status" or changes[name] is None
                  else _dump(changes[name]) for name in columns]
        assignments = ", ".join(f"{name} = ?" for name in (*columns, "updated_at"))
        self.db.execute(f"UPDATE sea_runs SET {assignments} WHERE run_id = ?",
                        (*values, now(), run_id))


def settle_orphans(records: Records) -> int:
    """Mark the runs a stopped server left pending or running as failed, and their
    conversations as no longer busy; how many runs. Only for a server that is the one
    process running its database's pulses (embedded mode)."""
    error = {"code": "SEA800", "message": "the server stopped before the run ended"}
    with records.db.transaction():
        gone = records.db.execute(
            "UPDATE sea_runs SET status = 'error', error = ?, updated_at = ? "
            "WHERE status IN ('pending', 'running')", (_dump(error), now()))
        records.db.execute("UPDATE sea_threads SET status = 'idle', updated_at = ? "
                           "WHERE status = 'busy'", (now(),))
    return gone.rowcount


def json_filter(metadata: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    """``metadata`` has every key of ``wanted`` with the same value."""
    return all(metadata.get(key) == value for key, value in (wanted or {}).items())


def page(items: Sequence[Any], limit: int, offset: int) -> list[Any]:
    """One page of ``items``."""
    return list(items[offset:offset + limit])
