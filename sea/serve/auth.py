"""Who is asking: the key a request carries, and what it may do.

A minimal version, one dev token given to :func:`sea.serve.app.create_app`, with every
role in the ``default`` tenant; API keys, roles per key and tenants replace it.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from fastapi import HTTPException, Request

ROLES = ("read", "run", "approve", "author", "memory", "admin")


@dataclass(frozen=True)
class Principal:
    """The key a request was made with: its name, roles, tenant and the personas (fnmatch
    patterns) it may reach."""

    name: str
    roles: frozenset[str]
    tenant: str
    personas: tuple[str, ...]

    def has(self, role: str) -> bool:
        """The key has ``role``."""
        return role in self.roles

    def sees(self, persona_id: str, tenant: str) -> bool:
        """The key may reach the persona ``persona_id`` of ``tenant``."""
        return tenant == self.tenant and any(
            fnmatchcase(persona_id, pattern) for pattern in self.personas)


class Auth:
    """The FastAPI dependency that finds a request's principal (401 without a valid key).

    Args:
        token: The one key accepted (the dev token).
    """

    def __init__(self, token: str) -> None:
        self._token = token

    async def __call__(self, request: Request) -> Principal:
        """The principal of ``request``'s key (``Authorization: Bearer`` or ``x-api-key``).

        Raises:
            HTTPException: 401, no key or an unknown one.
        """
        given = request.headers.get("x-api-key")
        header = request.headers.get("authorization", "")
        if given is None and header[:7].lower() == "bearer ":
            given = header[7:].strip()
        if not given or not hmac.compare_digest(given.encode(), self._token.encode()):
            raise HTTPException(401, "a valid API key is needed (Authorization: Bearer or "
                                "x-api-key)")
        return Principal("dev", frozenset(ROLES), "default", ("*",))


def require(role: str) -> Callable[[Request], Awaitable[Principal]]:
    """A FastAPI dependency: the request's principal, 403 when it lacks ``role``."""

    async def dependency(request: Request) -> Principal:
        principal: Principal = await request.app.state.auth(request)
        request.state.principal = principal  # the access log names the key
        if not principal.has(role):
            raise HTTPException(403, f"this key lacks the {role!r} role")
        return principal

    return dependency
