"""The route-enumeration check of keys, roles and tenants, for any app guarded by
:func:`sea.serve.auth.require`.

It reads the app's OpenAPI document, where :func:`~sea.serve.auth.require` names each
operation's role as the scope of its security requirement, and calls EVERY operation:

a. without a key: 401;
b. for each role the operation needs, with a key of the tenant that has every other role
   (``admin`` aside, which has them all): 403;
c. when its path names a tenant's object (a persona, a thread, a run...), with a key that
   has every role, on another tenant's ids: 404, with the same error code and message as
   for ids that do not exist (no existence leaks).

An operation without a role fails the check unless it is listed as public. So a new route
cannot be forgotten: it is in the document, and so it is checked.

Usage (the server's test, once the real app exists)::

    report = check_isolation(client, Isolation(
        own={"thread_id": thread_a, "run_id": run_a, "persona_id": "acme-aoi"},
        foreign={"thread_id": thread_b, "run_id": run_b, "persona_id": "globex-kai"},
        key_for=store_keys(keys, tenant="acme"),
        bodies={"POST /threads/{thread_id}/runs": {"assistant_id": "agent"}}))
    assert report.failures == []
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from sea.serve.auth import ROLES
from sea.serve.keys import KeyStore

METHODS = ("get", "post", "put", "patch", "delete")
PUBLIC = ("GET /ok", "GET /openapi.json", "GET /docs", "GET /docs/oauth2-redirect",
          "GET /redoc")
"""Operations answered without a key, by default."""
UNKNOWN = "sea-isolation-unknown"


@dataclass(frozen=True)
class Isolation:
    """What the check needs to call every operation."""

    own: Mapping[str, str]
    """Path parameter -> a value the checking tenant may reach (its persona, thread, run...)
    or one shared by every tenant (a playbook's name)."""
    foreign: Mapping[str, str]
    """Path parameter -> the id of another tenant's object; parameters absent here are
    shared (the ``own`` value is used)."""
    key_for: Callable[[frozenset[str]], str]
    """A key of the checking tenant with exactly these roles."""
    public: Collection[str] = PUBLIC
    """Operations (``"GET /ok"``) that need no key."""
    bodies: Mapping[str, Any] = field(default_factory=dict)
    """Operation -> its JSON body; ``{param}`` in its strings is filled as the path is."""
    queries: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Operation -> its query parameters, filled the same way."""


@dataclass
class Report:
    """What the check did: the operations it called, and what went wrong."""

    checked: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def check_isolation(client: Any, isolation: Isolation, *, app: Any = None,
                    document: Mapping[str, Any] | None = None) -> Report:
    """Call every operation of the app's OpenAPI document as (a), (b) and (c) above.

    Args:
        client: An HTTP client of the app: an ``httpx.Client`` with the server's
            ``base_url``, or Starlette's ``TestClient``.
        isolation: The ids, keys and bodies to call with.
        app: The app itself, if at hand: its routes left out of the document fail too.
        document: The OpenAPI document (default: ``GET /openapi.json``).

    Returns:
        The operations checked and the failures, each naming the operation.
    """
    report = Report()
    if document is None:
        document = client.get("/openapi.json").json()
    if app is not None:
        report.failures += _hidden_routes(app, isolation.public)
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            operation = item.get(method)
            if operation is not None:
                _check_operation(client, isolation, method.upper(), path, operation, report)
    return report


def store_keys(keys: KeyStore, *, tenant: str,
               personas: tuple[str, ...] = ("*",)) -> Callable[[frozenset[str]], str]:
    """:attr:`Isolation.key_for` from a :class:`~sea.serve.keys.KeyStore`: one key per set of
    roles, made when first asked for (named ``iso-<tenant>-<roles>``)."""
    made: dict[frozenset[str], str] = {}

    def key_for(roles: frozenset[str]) -> str:
        if roles not in made:
            name = "-".join(["iso", tenant, *sorted(roles)])[:64]
            made[roles] = keys.add(name, sorted(roles), tenant=tenant, personas=personas)[1]
        return made[roles]

    return key_for


def _check_operation(client: Any, isolation: Isolation, method: str, path: str,
                     operation: Mapping[str, Any], report: Report) -> None:
    name = f"{method} {path}"
    report.checked.append(name)
    roles = sorted({role for requirement in operation.get("security", [])
                    for scopes in requirement.values() for role in scopes})
    if not roles:
        if name not in isolation.public:
            report.failures.append(f"{name}: needs no role (no require() dependency); guard "
                                   "it, or list it as public")
        return
    params = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    missing = [p for p in params if p not in isolation.own]
    if missing:
        report.failures.append(f"{name}: no value for the path parameter(s) {missing}")
        return
    own = dict(isolation.own)
    call = _Call(client, isolation, method, path, name)

    answer = call(own, None)
    call.expect(answer, 401, "without a key", report)
    for role in roles:
        lacking = frozenset(ROLES) - {role, "admin"}
        answer = call(own, isolation.key_for(lacking))
        call.expect(answer, 403, f"with a key lacking the role {role!r}", report)
    tenant_params = [p for p in params if p in isolation.foreign]
    if tenant_params:
        full = isolation.key_for(frozenset(ROLES))
        foreign = {**own, **{p: isolation.foreign[p] for p in tenant_params}}
        unknown = {**own, **{p: f"{UNKNOWN}-{p}" for p in tenant_params}}
        seen = call(foreign, full)
        if call.expect(seen, 404, f"on another tenant's {', '.join(tenant_params)}", report):
            absent = call(unknown, full)
            if call.expect(absent, 404, "on ids that do not exist", report):
                _same_answer(name, seen, foreign, absent, unknown, tenant_params, report)


@dataclass(frozen=True)
class Answer:
    """A response's status and text."""

    status_code: int
    text: str

    def json(self) -> Any:
        """The body as JSON.

        Raises:
            ValueError: it is not JSON.
        """
        return orjson.loads(self.text)


@dataclass
class _Call:
    client: Any
    isolation: Isolation
    method: str
    path: str
    name: str

    def __call__(self, ids: Mapping[str, str], key: str | None) -> Answer:
        url = self.path.format(**ids)
        body = _fill(self.isolation.bodies.get(self.name), ids)
        query = _fill(self.isolation.queries.get(self.name), ids)
        headers = {"x-api-key": key} if key is not None else {}
        request = self.client.build_request(self.method, url, json=body, params=query,
                                            headers=headers)
        response = self.client.send(request, stream=True)
        try:  # a stream that should not have started is not followed, only noted
            streaming = response.headers.get("content-type", "").startswith("text/event-stream")
            text = "<an event stream>" if streaming else response.read().decode("utf-8", "replace")
        finally:
            response.close()
        return Answer(response.status_code, text)

    def expect(self, answer: Answer, status: int, how: str, report: Report) -> bool:
        if answer.status_code == status:
            return True
        hint = " (give its body or query in Isolation.bodies/queries)" \
            if answer.status_code == 422 else ""
        report.failures.append(f"{self.name} {how}: {answer.status_code}, not {status}{hint}: "
                               f"{answer.text[:300]}")
        return False


def _same_answer(name: str, seen: Answer, foreign: Mapping[str, str], absent: Answer,
                 unknown: Mapping[str, str], params: list[str], report: Report) -> None:
    def shape(answer: Answer, ids: Mapping[str, str]) -> tuple[Any, str]:
        try:
            body = answer.json()
        except ValueError:
            return None, answer.text
        error = body.get("error", {}) if isinstance(body, dict) else {}
        message = str(error.get("message", body))
        for param in params:
            message = message.replace(ids[param], f"<{param}>")
        return error.get("code"), message

    if shape(seen, foreign) != shape(absent, unknown):
        report.failures.append(f"{name}: another tenant's ids answer {shape(seen, foreign)}, "
                               f"unknown ids {shape(absent, unknown)}: the difference tells "
                               "that they exist")


def _fill(value: Any, ids: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, Mapping):
        return {key: _fill(item, ids) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, ids) for item in value]
    return value


def _hidden_routes(app: Any, public: Collection[str]) -> list[str]:
    """The app's routes that the OpenAPI document leaves out (so the check cannot call
    them), unless listed as public: ``METHOD /path``, or ``MOUNT /path`` for a mount."""
    from fastapi import routing
    from starlette.routing import Mount

    iterate = getattr(routing, "iter_route_contexts", None)  # FastAPI >= 0.16x nests routers
    found = []
    for route in iterate(app.routes) if iterate is not None else app.routes:
        original = getattr(route, "original_route", route)
        if isinstance(original, Mount):
            if f"MOUNT {original.path}" not in public:
                found.append(f"MOUNT {original.path}: a mount the OpenAPI document leaves out, "
                             "so unchecked (list it as public if it needs no key)")
            continue
        if getattr(route, "include_in_schema", True):
            continue
        path = getattr(route, "path_format", None) or getattr(route, "path", "?")
        for method in sorted(set(getattr(route, "methods", None) or ()) - {"HEAD"}):
            if f"{method} {path}" not in public:
                found.append(f"{method} {path}: left out of the OpenAPI document, so unchecked")
    return found
