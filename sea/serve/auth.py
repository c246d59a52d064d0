"""Who a request comes from, and what it may do: API keys, roles, tenants, the dev token.

Every route depends on :func:`require` with the role it needs; the dependency asks the
:class:`Auth` kept on ``app.state.auth`` for the request's :class:`Principal` (the key's
name, roles, tenant and persona patterns) and answers 401 without an accepted key, 403
without the role. The route then answers 404 for a persona the principal does not
:meth:`~Principal.sees`, the same answer as for one that does not exist.

A key is read from ``Authorization: Bearer <key>`` or ``x-api-key: <key>`` (what
LangGraph's SDKs send). Without any key in the store the server runs in dev mode: it accepts
one random token made for the process (:func:`auth_for`), printed once at start, and
listens on loopback only (:func:`sea.serve.security.check_bind`).

(No ``from __future__ import annotations`` here: FastAPI reads the signature of the
dependency :func:`require` makes, whose annotations name the role it was made for.)
"""

import hmac
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Annotated, Any

from fastapi import Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from sea.errors import AuthenticationError, PermissionDeniedError
from sea.serve.keys import (
    DEFAULT_TENANT,
    ROLES,
    ApiKey,
    KeyStore,
    check_roles,
    digest,
    new_secret,
)

__all__ = [
    "DEV_NAME", "ROLES", "Auth", "Principal", "auth_for", "dev_banner", "dev_principal",
    "dev_token", "presented_key", "require",
]

DEV_NAME = "dev"
"""The name (and so the approver) of the dev token's principal."""
DEV_PREFIX = "sea_dev_"

_BEARER = HTTPBearer(auto_error=False, scheme_name="bearer",
                     description="`Authorization: Bearer <key>`")
_API_KEY = APIKeyHeader(name="x-api-key", auto_error=False, scheme_name="apiKey",
                        description="`x-api-key: <key>` (what LangGraph's SDKs send)")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request comes from: a key (or the dev token) and what it may reach."""

    name: str
    """The key's name: recorded as the approver of what it approves."""
    roles: frozenset[str]
    tenant: str
    personas: tuple[str, ...]
    """:func:`fnmatch.fnmatchcase` patterns of the persona ids it may reach."""
    key_id: str = ""
    """The key's id (empty for the dev token)."""

    def has(self, role: str) -> bool:
        """Whether the principal may act in ``role`` (``admin`` has every role)."""
        return role in self.roles or "admin" in self.roles

    def sees(self, persona_id: str, tenant: str) -> bool:
        """Whether a persona of ``tenant`` with this id is within reach: the principal's
        own tenant, and an id one of its patterns matches. Anything else answers 404."""
        return tenant == self.tenant and any(
            fnmatchcase(persona_id, pattern) for pattern in self.personas)

    @classmethod
    def of_key(cls, key: ApiKey) -> "Principal":
        """The principal of a stored key."""
        return cls(name=key.name, roles=frozenset(key.roles), tenant=key.tenant,
                   personas=key.personas, key_id=key.id)


class Auth:
    """The request's principal, from its key (a FastAPI dependency, kept on
    ``app.state.auth``).

    Args:
        keys: The stored keys (None: only the dev token is accepted).
        dev_token: A token accepted besides the keys, as an ``admin`` of the default tenant
            (see :func:`auth_for`).
        cache_seconds: How long an accepted key is remembered without asking the database
            again: a revoked key is refused by every server within this time.
        clock: Monotonic seconds (tests pass their own).
    """

    def __init__(self, keys: KeyStore | None = None, *, dev_token: str | None = None,
                 cache_seconds: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.keys = keys
        self.dev_token = dev_token
        self.cache_seconds = cache_seconds
        self._clock = clock
        self._cache: OrderedDict[str, tuple[Principal, float]] = OrderedDict()
        self._cache_size = 1024

    async def __call__(self, request: Request) -> Principal:
        """The principal of the request's key, also kept as ``request.state.principal``.

        Raises:
            AuthenticationError: no key, two different keys, or a key not accepted.
        """
        try:
            principal = await self.principal_of(presented_key(request))
        except AuthenticationError as refused:
            if self.dev_token is not None:
                refused.hint = ("send the token sea serve printed at start (dev mode) as "
                                "'Authorization: Bearer <token>' or 'x-api-key: <token>'")
            raise
        request.state.principal = principal
        return principal

    async def principal_of(self, secret: str) -> Principal:
        """The principal of a presented key.

        Raises:
            AuthenticationError: the key is not accepted.
        """
        if self.dev_token is not None and hmac.compare_digest(
                secret.encode("utf-8"), self.dev_token.encode("utf-8")):
            return dev_principal()
        remembered = digest(secret)
        cached = self._cache.get(remembered)
        now = self._clock()
        if cached is not None and cached[1] > now:
            return cached[0]
        key = None
        if self.keys is not None:
            key = await run_in_threadpool(self.keys.verify, secret)
        if key is None:
            self._cache.pop(remembered, None)
            raise AuthenticationError("the API key is not accepted (unknown or revoked)")
        principal = Principal.of_key(key)
        if self.cache_seconds > 0:
            self._cache[remembered] = (principal, now + self.cache_seconds)
            self._cache.move_to_end(remembered)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return principal


def presented_key(request: Request) -> str:
    """The key a request presents in ``Authorization: Bearer`` or ``x-api-key``; an
    ``Authorization`` of another scheme (a proxy's ``Basic``) is left to its owner when
    ``x-api-key`` is there.

    Raises:
        AuthenticationError: no key, or two different keys.
    """
    header = request.headers.get("authorization")
    bearer = None
    if header is not None:
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            bearer = value.strip()
    api_key = (request.headers.get("x-api-key") or "").strip() or None
    if bearer and api_key and bearer != api_key:
        raise AuthenticationError("the request carries two different keys (Authorization "
                                  "and x-api-key); send one")
    secret = bearer or api_key
    if secret:
        return secret
    if header is not None:
        raise AuthenticationError("the request carries no API key (its Authorization header "
                                  "is not 'Bearer <key>')")
    raise AuthenticationError("the request carries no API key")


def require(role: str) -> Callable[..., Awaitable[Principal]]:
    """A FastAPI dependency that answers the request's principal if it has ``role``.

    The OpenAPI document lists the role as the scope of the route's security requirement
    (``{"bearer": [role]}``, ``{"apiKey": [role]}``), which the route-enumeration test reads.

    Args:
        role: One of :data:`ROLES`.

    Returns:
        The dependency (``principal: Principal = Depends(require("run"))``).

    Raises:
        KeySpecError: ``role`` is not one of :data:`ROLES` (when the route is declared).
    """
    (checked,) = check_roles([role])

    async def dependency(
        request: Request,
        _bearer: Annotated[HTTPAuthorizationCredentials | None,
                           Security(_BEARER, scopes=[checked])],
        _api_key: Annotated[str | None, Security(_API_KEY, scopes=[checked])],
    ) -> Principal:
        auth: Auth = request.app.state.auth
        principal = await auth(request)
        if not principal.has(checked):
            raise PermissionDeniedError(f"the key {principal.name!r} lacks the role "
                                        f"{checked!r} this request needs")
        return principal

    dependency.__name__ = f"require_{checked}"
    return dependency


def dev_principal() -> Principal:
    """The dev token's principal: every role, the default tenant, every persona."""
    return Principal(name=DEV_NAME, roles=frozenset(ROLES), tenant=DEFAULT_TENANT,
                     personas=("*",))


def dev_token() -> str:
    """A new random token for one server process in dev mode (``sea_dev_`` + 43 chars)."""
    return new_secret(DEV_PREFIX)


def auth_for(keys: KeyStore, **options: Any) -> tuple[Auth, str | None]:
    """The server's :class:`Auth`: from the stored keys, plus a dev token when the store
    holds none (the server prints it once at start and binds to loopback only).

    Args:
        keys: The stored keys.
        options: More arguments of :class:`Auth` (``cache_seconds``).

    Returns:
        The Auth, and the dev token (None when keys exist).
    """
    token = None if keys.has_keys() else dev_token()
    return Auth(keys, dev_token=token, **options), token


def dev_banner(token: str, url: str) -> str:
    """What the server prints once at start in dev mode."""
    return (f"No API key in the store: dev mode, loopback only. This process's token "
            f"(shown once):\n\n    {token}\n\nSend it as 'Authorization: Bearer {token[:12]}...' "
            f"or 'x-api-key' to {url}. For keys of your own: sea keys add NAME --role ROLE")

