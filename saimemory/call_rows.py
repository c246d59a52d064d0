"""Call records over an open transaction (table ``call_records`` of migration 5)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any

from saimemory.calls import CACHE_OUTCOMES, CALL_KINDS, CALL_OUTCOMES, CallRecord
from saimemory.errors import InvalidMessageError
from saimemory.prepare import check_identifier, from_micros, to_micros
from saimemory.tx import Row, Tx

_STORED = tuple(f.name for f in fields(CallRecord) if f.name not in ("id", "created_at"))
"""The record's fields kept in columns of the same names, in the record's order (``id`` and
``created_us`` are the store's)."""
_COLUMNS = ", ".join(("id", *_STORED, "created_us"))
MAX_COUNT = 2**63 - 1
"""The largest count a record keeps (both backends' 64-bit integers)."""
MAX_ERROR_CHARS = 2_000
"""The longest error text a record keeps (the rest is cut)."""


def check_call(record: CallRecord) -> None:
    """Refuse a record the store cannot keep (:class:`InvalidMessageError`)."""
    check_identifier(record.persona, "persona")
    check_identifier(record.name, "call name")
    if record.kind not in CALL_KINDS:
        raise InvalidMessageError(f"call kind must be model or tool, got {record.kind!r}")
    if record.outcome not in CALL_OUTCOMES:
        raise InvalidMessageError(f"call outcome must be ok, error or cancelled, "
                                  f"got {record.outcome!r}")
    if record.cache is not None and record.cache not in CACHE_OUTCOMES:
        raise InvalidMessageError(f"call cache must be hit, miss or None, got {record.cache!r}")
    for name in ("pulse_id", "playbook", "node", "pattern", "model_kind"):
        check_identifier(getattr(record, name), name, optional=True)
    for name in ("tokens_in", "tokens_out", "retries", "tokens_saved"):
        value = getattr(record, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
            raise InvalidMessageError(
                f"{name} must be an integer from 0 to {MAX_COUNT}, got {value!r}")
    for name in ("latency_s", "cost"):
        value = getattr(record, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and value >= 0
        ):
            raise InvalidMessageError(f"{name} must be a finite number >= 0, got {value!r}")


def _kept_error(error: str | None) -> str | None:
    return None if error is None else error.replace("\x00", "")[:MAX_ERROR_CHARS]


_TO_COLUMN: dict[str, Callable[[Any], Any]] = {
    "latency_s": float, "cost": float, "fallback": lambda flag: 1 if flag else 0,
    "error": _kept_error,
}
"""How a field is written where its column differs from its value (the rest as they are)."""
_FROM_COLUMN: dict[str, Callable[[Any], Any]] = {
    "latency_s": float, "tokens_in": int, "tokens_out": int, "retries": int, "cost": float,
    "fallback": bool, "tokens_saved": int,
}
"""How a column is read back where the backends' values differ from the field's type."""
_INSERT = f"INSERT INTO call_records ({', '.join((*_STORED, 'created_us'))}) VALUES "
_ROW = f"({', '.join('?' * (len(_STORED) + 1))})"
ROWS_PER_INSERT = 500
"""Records written by one statement (19 parameters each, within both backends' limits)."""


def insert_statements(records: Sequence[CallRecord], now_us: int) -> list[tuple[str, list[Any]]]:
    """The statements (``?`` placeholders) and parameters that write the records (already
    checked), up to :data:`ROWS_PER_INSERT` a statement."""
    statements = []
    for start in range(0, len(records), ROWS_PER_INSERT):
        chunk = records[start:start + ROWS_PER_INSERT]
        params: list[Any] = []
        for record in chunk:
            params += [_TO_COLUMN.get(name, _same)(getattr(record, name)) for name in _STORED]
            params.append(now_us)
        statements.append((_INSERT + ", ".join([_ROW] * len(chunk)), params))
    return statements


def insert_calls(tx: Tx, records: Sequence[CallRecord], now_us: int) -> None:
    """Write the records (already checked), up to :data:`ROWS_PER_INSERT` a statement."""
    for sql, params in insert_statements(records, now_us):
        tx.run(sql, params)


def _same(value: Any) -> Any:
    return value


def _record(row: Row) -> CallRecord:
    stored = {name: _FROM_COLUMN.get(name, _same)(value)
              for name, value in zip(_STORED, row[1:-1], strict=True)}
    return CallRecord(id=int(row[0]), created_at=from_micros(row[-1]), **stored)


def read_calls(
    tx: Tx, persona: str | None, since: datetime | None, pulse_id: str | None
) -> list[CallRecord]:
    """The records of ``persona`` (every persona when None), from ``since`` on (inclusive),
    of one pulse when ``pulse_id`` is given; oldest first."""
    where: list[str] = []
    params: list[Any] = []
    if persona is not None:
        where.append("persona = ?")
        params.append(persona)
    if since is not None:
        if since.tzinfo is None:
            raise InvalidMessageError(f"since must be timezone-aware, got {since!r}")
        where.append("created_us >= ?")
        params.append(to_micros(since))
    if pulse_id is not None:
        where.append("pulse_id = ?")
        params.append(pulse_id)
    clause = f"WHERE {' AND '.join(where)} " if where else ""
    rows = tx.fetch(f"SELECT {_COLUMNS} FROM call_records {clause}ORDER BY id", params)
    return [_record(row) for row in rows]
