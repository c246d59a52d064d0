"""API keys: made once, kept as a digest, listed without a secret, revoked, checked; on
SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sea.errors import KeyNameTakenError, KeyNotFoundError, KeySpecError, ServerDatabaseError
from sea.serve.db import ServerDB
from sea.serve.keys import KEY_PREFIX, KeyStore, digest, looks_like_key, new_secret
from tests.serve.authkit import BACKENDS, server_db


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerDB]:
    with server_db(request.param, tmp_path) as opened:
        yield opened


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def keys(db: ServerDB, clock: Clock) -> KeyStore:
    return KeyStore(db, clock=clock)


def test_a_key_is_shown_once_and_kept_as_its_digest(keys: KeyStore, db: ServerDB) -> None:
    key, secret = keys.add("alice", ["run", "read"], tenant="acme", personas=["acme-*"])
    assert secret.startswith(KEY_PREFIX) and len(secret) == 50 and looks_like_key(secret)
    assert (key.name, key.roles, key.tenant, key.personas) == (
        "alice", ("read", "run"), "acme", ("acme-*",))
    assert key.shown == secret[:11] and key.id.startswith("key_")
    stored = db.fetch("SELECT * FROM sea_api_keys")
    assert len(stored) == 1
    assert secret not in repr(stored) and digest(secret) in repr(stored)
    assert "sea_sk_" not in repr(key.to_json()).replace(key.shown, "")


def test_secrets_are_random_and_of_one_shape() -> None:
    made = {new_secret() for _ in range(200)}
    assert len(made) == 200
    assert all(looks_like_key(secret) for secret in made)
    assert not looks_like_key("sea_sk_short")
    assert not looks_like_key(new_secret()[:-1] + "-")


def test_verify_accepts_the_key_and_nothing_else(keys: KeyStore) -> None:
    key, secret = keys.add("alice", ["read"])
    assert keys.verify(secret) is not None
    assert keys.verify(secret).id == key.id  # type: ignore[union-attr]
    assert keys.verify(secret[:-1] + ("a" if secret[-1] != "a" else "b")) is None
    assert keys.verify(new_secret()) is None
    assert keys.verify("") is None
    assert keys.verify(digest(secret)) is None  # the digest is not a key


def test_last_used_is_written_at_most_once_a_minute(keys: KeyStore, clock: Clock) -> None:
    _, secret = keys.add("alice", ["read"])
    assert keys.get("alice").last_used is None
    first = clock.now
    keys.verify(secret)
    assert keys.get("alice").last_used == first
    clock.now += timedelta(seconds=30)
    keys.verify(secret)
    assert keys.get("alice").last_used == first
    clock.now += timedelta(seconds=31)
    keys.verify(secret)
    assert keys.get("alice").last_used == clock.now


def test_a_revoked_key_is_refused_and_stays_listed(keys: KeyStore, clock: Clock) -> None:
    key, secret = keys.add("alice", ["read"])
    assert keys.has_keys()
    revoked, done = keys.revoke("alice")
    assert done and revoked.revoked == clock.now and not revoked.active
    assert keys.verify(secret) is None
    assert not keys.has_keys()
    again, done_again = keys.revoke(key.id)
    assert not done_again and again.revoked == clock.now
    assert [(k.name, k.active) for k in keys.list()] == [("alice", False)]
    assert keys.list(include_revoked=False) == []


def test_a_name_names_one_active_key(keys: KeyStore, clock: Clock) -> None:
    old, _ = keys.add("alice", ["read"])
    with pytest.raises(KeyNameTakenError, match="'alice' exists already") as caught:
        keys.add("alice", ["run"])
    assert caught.value.code == "SEA867" and caught.value.status == 409
    keys.revoke("alice")
    clock.now += timedelta(seconds=1)
    new, secret = keys.add("alice", ["run"])
    assert keys.get("alice").id == new.id  # the name finds the active key
    assert keys.get(old.id).revoked is not None
    assert keys.verify(secret) is not None


def test_revoking_an_unknown_key_names_the_nearest(keys: KeyStore) -> None:
    keys.add("alice", ["read"])
    with pytest.raises(KeyNotFoundError, match="did you mean 'alice'") as caught:
        keys.revoke("alcie")
    assert caught.value.code == "SEA866" and isinstance(caught.value, LookupError)


@pytest.mark.parametrize(("name", "roles", "tenant", "personas", "message"), [
    ("", ["read"], "default", ["*"], "name is empty"),
    ("a b", ["read"], "default", ["*"], "is not allowed"),
    ("x" * 65, ["read"], "default", ["*"], "is not allowed"),
    ("key_0123456789ab", ["read"], "default", ["*"], "an id"),
    ("al\x1bice", ["read"], "default", ["*"], "is not allowed"),
    ("alice", [], "default", ["*"], "at least one role"),
    ("alice", ["reed"], "default", ["*"], "unknown role 'reed'; did you mean 'read'"),
    ("alice", ["root"], "default", ["*"], "unknown role 'root'"),
    ("alice", ["read"], "", ["*"], "tenant '' is not allowed"),
    ("alice", ["read"], "ac me", ["*"], "tenant 'ac me'"),
    ("alice", ["read"], "default", ["acme *"], "persona pattern 'acme \\*'"),
    ("alice", ["read"], "default", [""], "persona pattern ''"),
])
def test_malformed_keys_are_refused_with_a_clear_error(
    keys: KeyStore, name: str, roles: list[str], tenant: str, personas: list[str], message: str
) -> None:
    with pytest.raises(KeySpecError, match=message) as caught:
        keys.add(name, roles, tenant=tenant, personas=personas)
    assert caught.value.code == "SEA865"
    assert keys.list() == []


def test_roles_are_normalised_and_patterns_default_to_every_persona(keys: KeyStore) -> None:
    key, _ = keys.add(" bob ", ["ADMIN", "read", "read"], personas=[])
    assert (key.name, key.roles, key.tenant, key.personas) == (
        "bob", ("read", "admin"), "default", ("*",))
    assert keys.list()[0] == key


def test_two_connections_to_one_database_share_the_keys(db: ServerDB, clock: Clock) -> None:
    other = ServerDB(db.location)  # another server process, say
    try:
        first, second = KeyStore(db, clock=clock), KeyStore(other, clock=clock)
        _, secret = first.add("alice", ["read"])
        assert second.verify(secret) is not None
        second.revoke("alice")
        assert first.verify(secret) is None
    finally:
        other.close()



def test_the_database_itself_keeps_one_active_key_per_name(keys: KeyStore, db: ServerDB) -> None:
    """What refuses a name two processes give at once: the table's unique index (add maps
    the refusal to KeyNameTakenError)."""
    keys.add("alice", ["read"])
    row = db.fetch_one("SELECT * FROM sea_api_keys")
    assert row is not None
    twin = ("key_000000000000", "alice", "0" * 64, *row[3:])
    with pytest.raises(ServerDatabaseError):
        db.execute("INSERT INTO sea_api_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", twin)
    db.execute("UPDATE sea_api_keys SET revoked = ? WHERE name = ?", ["2026-01-01", "alice"])
    db.execute("INSERT INTO sea_api_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", twin)
