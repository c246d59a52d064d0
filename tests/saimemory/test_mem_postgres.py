"""PostgreSQL only: the schema named by the DSN, a lost connection, the CLI on a DSN."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from saimemory import NewMessage, open_store
from saimemory.errors import StoreUnavailableError
from sea.cli import main
from tests.saimemory.conftest import POSTGRES_DSN, drop_schema

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set"),
]


@pytest.fixture
def schema() -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:20]}"
    yield name
    drop_schema(name)


def dsn(schema: str, **params: str) -> str:
    assert POSTGRES_DSN is not None
    query = "&".join(f"{key}={value}" for key, value in {"schema": schema, **params}.items())
    return f"{POSTGRES_DSN}{'&' if '?' in POSTGRES_DSN else '?'}{query}"


def tables_in(schema: str) -> set[str]:
    import psycopg

    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN) as conn:
        rows = conn.execute("SELECT table_name FROM information_schema.tables "
                            "WHERE table_schema = %s", [schema]).fetchall()
    return {row[0] for row in rows}


def terminate(application_name: str) -> int:
    """End, from another connection, the server process of every connection by that name."""
    import psycopg

    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE application_name = %s", [application_name]).fetchall()
    return len(rows)


def test_the_dsn_names_the_schema_of_the_store(schema: str) -> None:
    store = open_store(dsn(schema))
    try:
        store.append(NewMessage("alice", "user", "in my own schema"))
    finally:
        store.close()
    assert {"messages", "threads", "message_tags", "schema_migrations"} <= tables_in(schema)
    other = f"{schema}_b"
    try:
        second = open_store(dsn(other))
        assert second.recent("alice") == []
        second.close()
    finally:
        drop_schema(other)


@pytest.mark.parametrize(
    ("target", "problem"),
    [
        ("?schema=Bad-Name", "must match"),
        ("?schema=a&schema=b", "names schema= 2 times"),
    ],
)
def test_a_bad_schema_in_the_dsn_is_a_clear_error(target: str, problem: str) -> None:
    assert POSTGRES_DSN is not None
    with pytest.raises(StoreUnavailableError, match=problem):
        open_store(POSTGRES_DSN.split("?")[0] + target)


def test_a_connection_lost_between_calls_is_reopened(schema: str) -> None:
    name = f"sea_{uuid.uuid4().hex[:12]}"
    store = open_store(dsn(schema, application_name=name))
    try:
        store.append(NewMessage("alice", "user", "before"))
        assert terminate(name) == 1
        assert [m.content for m in store.recent("alice")] == ["before"]
        assert terminate(name) == 1
        store.append(NewMessage("alice", "user", "after"))
        assert [m.content for m in store.recent("alice")] == ["before", "after"]
    finally:
        store.close()


class _SocketClosedUnnoticed:
    """A connection whose socket the kernel closed while libpq has not yet noticed: psycopg's
    wait raises ``OperationalError("connection socket closed")`` (no SQLSTATE) and the
    connection is neither ``closed`` nor ``broken``. This is a race a server's terminate can
    produce; it is staged here so the test does not depend on timing."""

    closed = False
    broken = False

    def __init__(self, real: object) -> None:
        self.real = real
        self.calls = 0

    def execute(self, *args: object, **kwargs: object) -> object:
        import psycopg

        self.calls += 1
        raise psycopg.OperationalError("connection socket closed")

    def close(self) -> None:
        self.closed = True
        self.real.close()  # type: ignore[attr-defined]


def test_a_socket_closed_before_libpq_notices_is_reopened(schema: str) -> None:
    from saimemory.postgres import PostgresStore

    store = PostgresStore(dsn(schema))
    try:
        store.append(NewMessage("alice", "user", "before"))
        stale = _SocketClosedUnnoticed(store._conn)
        store._conn = stale
        store.append(NewMessage("alice", "user", "after"))
        assert stale.calls == 1 and stale.closed
        stale = _SocketClosedUnnoticed(store._conn)
        store._conn = stale
        assert [m.content for m in store.recent("alice")] == ["before", "after"]
        assert stale.calls == 1 and stale.closed
    finally:
        store.close()


def test_a_connection_lost_inside_a_call_fails_it_clearly(schema: str) -> None:
    from saimemory.postgres import PostgresStore

    name = f"sea_{uuid.uuid4().hex[:12]}"
    store = PostgresStore(dsn(schema, application_name=name))
    try:
        store.append(NewMessage("alice", "user", "kept"))
        with pytest.raises(StoreUnavailableError, match="lost the connection") as info:
            with store._write("alice") as tx:
                tx.run("INSERT INTO threads (id, persona, parent, title, is_main, created_us) "
                       "VALUES ('alice:x', 'alice', 'alice:main', 'x', 0, 0)")
                terminate(name)
                tx.run("SELECT 1")
        assert info.value.code == "MEM004"
        assert [t.id for t in store.threads("alice")] == ["alice:main"]
        assert [m.content for m in store.recent("alice")] == ["kept"]
    finally:
        store.close()


def test_a_closed_store_stays_closed(schema: str) -> None:
    store = open_store(dsn(schema))
    store.close()
    with pytest.raises(StoreUnavailableError, match="closed"):
        store.recent("alice")


def test_cli_on_a_dsn_imports_an_export_once(
    schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = dsn(schema)
    store = open_store(db)
    store.append(NewMessage("alice", "user", "東京タワーを見た", pulse_id="p1"))
    store.close()
    assert main(["memory", "search", "--db", db, "--persona", "alice", "東京タワー"]) == 0
    assert "東京タワーを見た" in capsys.readouterr().out
    dump = tmp_path / "alice.jsonl"
    assert main(["memory", "export", "--db", db, "--persona", "alice", "-o", str(dump)]) == 0
    for expected in ("imported 1 messages (0 already", "imported 0 messages (1 already"):
        assert main(["memory", "import", "--db", db, "--persona", "bob", str(dump)]) == 0
        assert expected in capsys.readouterr().err
    assert main(["memory", "pulse", "--db", db, "--persona", "bob", "p1"]) == 0
    assert capsys.readouterr().out.count("東京タワーを見た") == 1


def test_relaxed_commits_are_asked_for_on_the_dsn_only(schema: str) -> None:
    """``options=-c synchronous_commit=off`` (libpq's, on the DSN) sets the store's session:
    commits no longer wait for the WAL flush. Without it the store keeps the server's
    setting (durable: ``on`` unless the server says otherwise)."""
    import psycopg

    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN) as conn:
        default = conn.execute("SHOW synchronous_commit").fetchone()
    assert default == ("on",)
    relaxed = open_store(dsn(schema, options="-c%20synchronous_commit%3Doff"))
    durable = open_store(dsn(schema))
    try:
        assert relaxed._conn.execute("SHOW synchronous_commit").fetchone() == ("off",)  # type: ignore[attr-defined]
        assert durable._conn.execute("SHOW synchronous_commit").fetchone() == default  # type: ignore[attr-defined]
        written = relaxed.append(NewMessage("aoi", "user", "committed without the flush"))
        assert [m.id for m in durable.recent("aoi")] == [written.id]
    finally:
        relaxed.close()
        durable.close()
