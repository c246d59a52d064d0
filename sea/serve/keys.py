"""API keys of the server: made, listed, revoked and checked, kept in the store's database.

A key is ``sea_sk_`` and 43 base62 characters (32 random bytes from :mod:`secrets`). It is
shown once, when it is made; the table ``sea_api_keys`` keeps only its SHA-256 digest (a
key is random and long: a slow password hash would add nothing) and its first characters,
so that a list can tell keys apart. Each key has a name (what an approval records as its
approver; one key that is not revoked per name), roles, a tenant and the persona patterns
it may reach. A revoked key stays in the table, so that its name and dates remain known.
"""

from __future__ import annotations

import builtins
import difflib
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from sea.errors import KeyNameTakenError, KeyNotFoundError, KeySpecError, ServerDatabaseError
from sea.serve.db import Row, ServerDB

ROLES = ("read", "run", "approve", "author", "memory", "admin")
"""What a key may do: ``read`` (threads, pulses, memory, traces), ``run`` (start and cancel
pulses), ``approve`` (answer approvals, approve or reject plans), ``author`` (write and
validate playbooks, replay), ``memory`` (pin, unpin, import), ``admin`` (keys, deleting
personas, schedules; and every other role)."""

DEFAULT_TENANT = "default"
"""The tenant of a key made without ``--tenant``, of the dev token, and of personas made
without a key."""

KEY_PREFIX = "sea_sk_"
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SECRET_CHARS = 43  # 62**43 > 2**256: 32 random bytes always fit
_SHOWN_CHARS = len(KEY_PREFIX) + 4
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
_ID = re.compile(r"key_[0-9a-f]{12}")
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_PATTERN = re.compile(r"[A-Za-z0-9._@*?\[\]!:-]{1,128}")
LAST_USED_EVERY = timedelta(seconds=60)
"""How stale ``last_used`` may get: a key used again sooner is not written again."""

DDL = (
    """CREATE TABLE IF NOT EXISTS sea_api_keys (
        id text PRIMARY KEY,
        name text NOT NULL,
        digest text NOT NULL UNIQUE,
        shown text NOT NULL,
        roles text NOT NULL,
        tenant text NOT NULL,
        personas text NOT NULL,
        created text NOT NULL,
        last_used text,
        revoked text
    )""",
    """CREATE UNIQUE INDEX IF NOT EXISTS sea_api_keys_active_name
        ON sea_api_keys (name) WHERE revoked IS NULL""",
)
_COLUMNS = "id, name, digest, shown, roles, tenant, personas, created, last_used, revoked"


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One key as the table keeps it (never its secret)."""

    id: str
    """``key_`` and 12 hexadecimal digits."""
    name: str
    """Unique among the keys that are not revoked; the approver approvals record."""
    roles: tuple[str, ...]
    tenant: str
    personas: tuple[str, ...]
    """:func:`fnmatch.fnmatchcase` patterns of the persona ids the key may reach."""
    shown: str
    """The secret's first characters (``sea_sk_AbCd``), to tell keys apart."""
    created: datetime
    last_used: datetime | None = None
    revoked: datetime | None = None

    @property
    def active(self) -> bool:
        """Whether the key is accepted (not revoked)."""
        return self.revoked is None

    def to_json(self) -> dict[str, Any]:
        """The key as ``sea keys list --json`` prints it (no secret, no digest)."""
        return {
            "id": self.id, "name": self.name, "roles": list(self.roles),
            "tenant": self.tenant, "personas": list(self.personas), "shown": self.shown,
            "created": self.created.isoformat(),
            "last_used": self.last_used.isoformat() if self.last_used else None,
            "revoked": self.revoked.isoformat() if self.revoked else None,
        }


class KeyStore:
    """The API keys in the store's database (table ``sea_api_keys``, made if missing).

    Args:
        db: The server's database connection.
        clock: The current time (tests pass their own).
    """

    def __init__(self, db: ServerDB, *, clock: Callable[[], datetime] | None = None) -> None:
        self.db = db
        self._now = clock or (lambda: datetime.now(UTC))
        db.create(DDL)

    def add(self, name: str, roles: Iterable[str], *, tenant: str = DEFAULT_TENANT,
            personas: Sequence[str] = ("*",)) -> tuple[ApiKey, str]:
        """Make a key.

        Args:
            name: Letters, digits and ``. _ @ -``, at most 64, starting with a letter or digit.
            roles: At least one of :data:`ROLES`.
            tenant: The tenant whose personas the key reaches.
            personas: Patterns of the persona ids it reaches (``*`` any, ``acme-*``...).

        Returns:
            The key as stored, and its secret: shown now and never again.

        Raises:
            KeySpecError: a malformed name, tenant or pattern, no role or an unknown one.
            KeyNameTakenError: a key that is not revoked has this name.
        """
        name = check_name(name)
        checked_roles = check_roles(roles)
        tenant = check_tenant(tenant)
        patterns = check_patterns(personas)
        secret = new_secret()
        key = ApiKey(id=f"key_{secrets.token_hex(6)}", name=name, roles=checked_roles,
                     tenant=tenant, personas=patterns, shown=secret[:_SHOWN_CHARS],
                     created=self._now())
        taken = KeyNameTakenError(f"a key named {name!r} exists already")
        try:
            with self.db.transaction():
                if self._active_named(name):
                    raise taken
                self.db.execute(
                    f"INSERT INTO sea_api_keys ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [key.id, name, digest(secret), key.shown, ",".join(checked_roles), tenant,
                     orjson.dumps(list(patterns)).decode(), key.created.isoformat(), None,
                     None])
        except ServerDatabaseError:
            if self._active_named(name):  # another process made it in between
                raise taken from None
            raise
        return key, secret

    def _active_named(self, name: str) -> bool:
        return self.db.fetch_one("SELECT id FROM sea_api_keys WHERE name = ? AND revoked IS NULL",
                                 [name]) is not None

    def list(self, *, include_revoked: bool = True) -> builtins.list[ApiKey]:
        """The keys, oldest first (revoked ones too, unless ``include_revoked`` is false)."""
        where = "" if include_revoked else " WHERE revoked IS NULL"
        rows = self.db.fetch(f"SELECT {_COLUMNS} FROM sea_api_keys{where} ORDER BY created, id")
        return [_key_of(row) for row in rows]

    def has_keys(self) -> bool:
        """Whether any key is accepted (one that is not revoked)."""
        return self.db.fetch_one("SELECT id FROM sea_api_keys WHERE revoked IS NULL") is not None

    def get(self, id_or_name: str) -> ApiKey:
        """The key with this id, else the key with this name (the one that is not revoked,
        else the last revoked one).

        Raises:
            KeyNotFoundError: no key has this id or name.
        """
        row = self.db.fetch_one(f"SELECT {_COLUMNS} FROM sea_api_keys WHERE id = ?", [id_or_name])
        if row is None:
            row = self.db.fetch_one(
                f"SELECT {_COLUMNS} FROM sea_api_keys WHERE name = ? "
                "ORDER BY revoked IS NULL DESC, revoked DESC", [id_or_name])
        if row is None:
            known = [key.name for key in self.list()]
            near = difflib.get_close_matches(id_or_name, known, n=1)
            raise KeyNotFoundError(f"no key has the id or name {id_or_name!r}"
                                   + (f"; did you mean {near[0]!r}?" if near else ""))
        return _key_of(row)

    def revoke(self, id_or_name: str) -> tuple[ApiKey, bool]:
        """Stop accepting a key.

        Returns:
            The key, and whether this call revoked it (false: it was revoked already).

        Raises:
            KeyNotFoundError: no key has this id or name.
        """
        key = self.get(id_or_name)
        if not key.active:
            return key, False
        now = self._now()
        done = self.db.execute("UPDATE sea_api_keys SET revoked = ? WHERE id = ? "
                               "AND revoked IS NULL", [now.isoformat(), key.id])
        if done.rowcount == 0:  # another process revoked it in between
            return self.get(key.id), False
        return replace(key, revoked=now), True

    def verify(self, secret: str) -> ApiKey | None:
        """The key a request presents, if it is accepted; records when it was last used
        (at most every :data:`LAST_USED_EVERY`)."""
        if not looks_like_key(secret):
            return None
        wanted = digest(secret)
        row = self.db.fetch_one(
            f"SELECT {_COLUMNS} FROM sea_api_keys WHERE digest = ? AND revoked IS NULL", [wanted])
        if row is None or not hmac.compare_digest(str(row[2]), wanted):
            return None
        key = _key_of(row)
        now = self._now()
        if key.last_used is None or now - key.last_used >= LAST_USED_EVERY:
            self.db.execute("UPDATE sea_api_keys SET last_used = ? WHERE id = ?",
                            [now.isoformat(), key.id])
            key = replace(key, last_used=now)
        return key


def new_secret(prefix: str = KEY_PREFIX) -> str:
    """A new key: ``prefix`` and 32 random bytes in base62 (43 characters)."""
    number = int.from_bytes(secrets.token_bytes(32), "big")
    chars = []
    for _ in range(_SECRET_CHARS):
        number, rest = divmod(number, 62)
        chars.append(_ALPHABET[rest])
    return prefix + "".join(reversed(chars))


def looks_like_key(secret: str) -> bool:
    """Whether the text has a key's shape (checked before the database is asked)."""
    return (len(secret) == len(KEY_PREFIX) + _SECRET_CHARS and secret.startswith(KEY_PREFIX)
            and all(char in _ALPHABET for char in secret[len(KEY_PREFIX):]))


def digest(secret: str) -> str:
    """The SHA-256 digest the table keeps of a key (hexadecimal)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    """A key's name, checked.

    Raises:
        KeySpecError: it is empty, too long, has other characters, or looks like a key id.
    """
    name = name.strip()
    if not name:
        raise KeySpecError("the key's name is empty; name it after who or what uses it, "
                           "e.g. sea keys add alice --role read")
    if not _NAME.fullmatch(name) or _ID.fullmatch(name):
        raise KeySpecError(
            f"the key name {name!r} is not allowed: use at most 64 letters, digits and . _ @ -, "
            "starting with a letter or digit (and not of the form key_ + 12 hex digits, an id)")
    return name


def check_roles(roles: Iterable[str]) -> tuple[str, ...]:
    """Roles, checked, in :data:`ROLES` order, without repeats.

    Raises:
        KeySpecError: no role, or one that is not in :data:`ROLES` (with the nearest one).
    """
    given = [role.strip().lower() for role in roles]
    if not given:
        raise KeySpecError(f"a key needs at least one role (--role ROLE): {', '.join(ROLES)}")
    for role in given:
        if role not in ROLES:
            near = difflib.get_close_matches(role, ROLES, n=1)
            raise KeySpecError(f"unknown role {role!r}"
                               + (f"; did you mean {near[0]!r}?" if near else "")
                               + f" (roles: {', '.join(ROLES)})")
    return tuple(role for role in ROLES if role in given)


def check_tenant(tenant: str) -> str:
    """A tenant's name, checked.

    Raises:
        KeySpecError: it is empty, too long or has other characters.
    """
    tenant = tenant.strip()
    if not _TENANT.fullmatch(tenant):
        raise KeySpecError(f"the tenant {tenant!r} is not allowed: use 1 to 64 letters, digits "
                           "and . _ -, starting with a letter or digit")
    return tenant


def check_patterns(patterns: Sequence[str]) -> tuple[str, ...]:
    """Persona patterns, checked (``*`` when none is given).

    Raises:
        KeySpecError: a pattern is empty, too long, or has spaces or other characters.
    """
    checked = []
    for pattern in patterns or ("*",):
        if not _PATTERN.fullmatch(pattern):
            raise KeySpecError(
                f"the persona pattern {pattern!r} is not allowed: 1 to 128 characters among "
                "letters, digits, . _ @ : - and the wildcards * ? [ ] !, e.g. 'acme-*'")
        if pattern not in checked:
            checked.append(pattern)
    return tuple(checked)


def _key_of(row: Row) -> ApiKey:
    key_id, name, _digest, shown, roles, tenant, personas, created, last_used, revoked = row
    return ApiKey(id=key_id, name=name, roles=tuple(r for r in str(roles).split(",") if r),
                  tenant=tenant, personas=tuple(orjson.loads(personas)), shown=shown,
                  created=_time(created), last_used=_time_or_none(last_used),
                  revoked=_time_or_none(revoked))


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _time_or_none(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)

