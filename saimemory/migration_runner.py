"""How the schema migrations are kept and applied: a :class:`Migration` is numbered, its
statements run in one transaction and it is recorded in the ``schema_migrations`` table
(:func:`upgrade`); :func:`current_version` reads where a store stands."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from saimemory.errors import SchemaError
from saimemory.prepare import to_micros
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
