"""Who a request comes from and what it may reach: keys in either header, roles (403),
tenants and persona patterns (404, the same as unknown), the dev token, the cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import Depends, Request
from fastapi.testclient import TestClient

from sea.errors import KeySpecError
from sea.serve.auth import ROLES, Auth, Principal, auth_for, dev_banner, require
from sea.serve.keys import KeyStore, new_secret
from tests.serve.authkit import BACKENDS, Reader, demo_app, server_db


class Ticks:
    """Monotonic seconds the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=BACKENDS)
def keys(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KeyStore]:
    with server_db(request.param, tmp_path) as db:
        yield KeyStore(db)


def client_of(auth: Auth) -> TestClient:
    return TestClient(demo_app(auth), raise_server_exceptions=False)


def test_principal_roles_and_reach() -> None:
    who = Principal("alice", frozenset({"read"}), "acme", ("acme-a*", "shared"))
    assert who.has("read") and not who.has("run")
    assert who.sees("acme-aoi", "acme") and who.sees("shared", "acme")
    assert not who.sees("acme-ren", "acme")
    assert not who.sees("acme-aoi", "globex")  # the same id in another tenant
    assert not who.sees("ACME-aoi", "acme")  # patterns are case-sensitive everywhere
    admin = Principal("root", frozenset({"admin"}), "acme", ("*",))
    assert all(admin.has(role) for role in ROLES)


def test_a_key_is_read_from_either_header(keys: KeyStore) -> None:
    _, secret = keys.add("alice", ["read"], tenant="acme")
    client = client_of(Auth(keys))
    for headers in ({"Authorization": f"Bearer {secret}"}, {"authorization": f"bearer {secret}"},
                    {"x-api-key": secret},
                    {"x-api-key": secret, "Authorization": f"Bearer {secret}"},
                    {"x-api-key": secret, "Authorization": "Basic YWxpY2U6c2VjcmV0"}):
        answer = client.get("/v1/personas", headers=headers)
        assert answer.status_code == 200, (headers, answer.text)
        assert answer.json() == ["acme-aoi", "acme-ren"]


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": "Basic YWxpY2U6c2VjcmV0"},
    {"Authorization": "Bearer "},
    {"x-api-key": "not-a-key"},
    {"x-api-key": new_secret()},
])
def test_no_accepted_key_is_401_with_sea_s_error_body(keys: KeyStore,
                                                      headers: dict[str, str]) -> None:
    keys.add("alice", ["read"])
    answer = client_of(Auth(keys)).get("/v1/personas", headers=headers)
    assert answer.status_code == 401
    body = answer.json()
    assert body["error"]["code"] == "SEA860" and body["detail"] == body["error"]["message"]
    assert "sea keys add" in body["error"]["hint"]
    assert answer.headers["www-authenticate"].startswith("Bearer")


def test_two_different_keys_are_refused(keys: KeyStore) -> None:
    _, one = keys.add("alice", ["read"])
    _, two = keys.add("bob", ["read"])
    answer = client_of(Auth(keys)).get(
        "/v1/personas", headers={"Authorization": f"Bearer {one}", "x-api-key": two})
    assert answer.status_code == 401 and "two different keys" in answer.json()["detail"]


def test_a_missing_role_is_403_and_admin_has_every_role(keys: KeyStore) -> None:
    _, reader = keys.add("reader", ["read"], tenant="acme")
    _, admin = keys.add("root", ["admin"], tenant="acme")
    client = client_of(Auth(keys))
    answer = client.post("/v1/personas/acme-aoi/pulses", json={"input": "hi"},
                         headers={"x-api-key": reader})
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "SEA861"
    assert "'reader' lacks the role 'run'" in answer.json()["detail"]
    assert client.post("/v1/personas/acme-aoi/pulses", json={"input": "hi"},
                       headers={"x-api-key": admin}).status_code == 200


def test_another_tenant_s_persona_answers_as_an_unknown_one(keys: KeyStore) -> None:
    _, acme = keys.add("acme-ops", list(ROLES), tenant="acme")
    client = client_of(Auth(keys))
    foreign = client.get("/v1/personas/globex-kai", headers={"x-api-key": acme})
    unknown = client.get("/v1/personas/nobody", headers={"x-api-key": acme})
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.json()["error"]["code"] == unknown.json()["error"]["code"] == "SEA820"
    assert (foreign.json()["detail"].replace("globex-kai", "X")
            == unknown.json()["detail"].replace("nobody", "X"))
    assert client.get("/v1/personas/acme-aoi", headers={"x-api-key": acme}).status_code == 200


def test_persona_patterns_narrow_a_tenant(keys: KeyStore) -> None:
    _, narrow = keys.add("aoi-only", ["read"], tenant="acme", personas=["acme-a*"])
    client = client_of(Auth(keys))
    assert client.get("/v1/personas", headers={"x-api-key": narrow}).json() == ["acme-aoi"]
    assert client.get("/v1/personas/acme-ren",
                      headers={"x-api-key": narrow}).status_code == 404


def test_the_approver_is_the_key_s_name_never_the_client_s(keys: KeyStore) -> None:
    _, secret = keys.add("carol", ["approve"], tenant="acme")
    answer = client_of(Auth(keys)).post(
        "/v1/approvals/t-acme-1", json={"approve": True, "approver": "mallory"},
        headers={"x-api-key": secret})
    assert answer.status_code == 200
    assert answer.json()["approver"] == "carol"


def test_a_revoked_key_is_refused_once_the_cache_forgets_it(keys: KeyStore) -> None:
    _, secret = keys.add("alice", ["read"])
    ticks = Ticks()
    client = client_of(Auth(keys, cache_seconds=5, clock=ticks))
    headers = {"x-api-key": secret}
    assert client.get("/v1/personas", headers=headers).status_code == 200
    keys.revoke("alice")
    ticks.now += 4.9
    assert client.get("/v1/personas", headers=headers).status_code == 200  # remembered
    ticks.now += 0.2
    assert client.get("/v1/personas", headers=headers).status_code == 401
    uncached = client_of(Auth(keys, cache_seconds=0))
    assert uncached.get("/v1/personas", headers=headers).status_code == 401


def test_dev_mode_only_without_keys(keys: KeyStore) -> None:
    auth, token = auth_for(keys)
    assert token is not None and token.startswith("sea_dev_") and auth.dev_token == token
    client = client_of(auth)
    answer = client.post("/v1/personas/acme-aoi/pulses", json={},
                         headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 404  # acme's personas are not the default tenant's
    assert client.get("/v1/personas", headers={"x-api-key": token}).json() == ["aoi"]
    refused = client.get("/v1/personas", headers={"x-api-key": token + "x"})
    assert refused.status_code == 401
    assert "the token sea serve printed at start" in refused.json()["error"]["hint"]
    assert token in dev_banner(token, "http://127.0.0.1:2024")
    _, other = auth_for(keys)
    assert other != token  # one token per process
    keys.add("alice", ["read"])
    with_keys, none = auth_for(keys)
    assert none is None and with_keys.dev_token is None


def test_the_principal_is_kept_on_the_request(keys: KeyStore) -> None:
    _, secret = keys.add("alice", ["read"], tenant="acme")
    app = demo_app(Auth(keys))
    seen: list[Principal] = []

    @app.get("/whoami")
    async def whoami(request: Request, who: Reader) -> str:
        seen.append(request.state.principal)
        return who.name

    answer = TestClient(app).get("/whoami", headers={"x-api-key": secret})
    assert answer.json() == "alice" and seen[0].tenant == "acme" and seen[0].key_id


def test_the_auth_itself_is_a_dependency(keys: KeyStore) -> None:
    _, secret = keys.add("alice", ["read"], tenant="acme")
    auth = Auth(keys)
    app = demo_app(auth)

    @app.get("/me")
    async def me(who: Principal = Depends(auth)) -> dict[str, str]:  # noqa: B008
        return {"name": who.name, "tenant": who.tenant}

    client = TestClient(app, raise_server_exceptions=False)
    assert client.get("/me", headers={"x-api-key": secret}).json() == {
        "name": "alice", "tenant": "acme"}
    assert client.get("/me").status_code == 401


def test_an_unknown_role_is_refused_when_the_route_is_declared() -> None:
    with pytest.raises(KeySpecError, match="did you mean 'approve'"):
        require("aprove")


def test_the_openapi_document_names_each_route_s_role() -> None:
    document = TestClient(demo_app(Auth())).get("/openapi.json").json()
    paths = document["paths"]
    assert paths["/v1/personas/{persona_id}/pulses"]["post"]["security"] == [
        {"bearer": ["run"]}, {"apiKey": ["run"]}]
    assert paths["/v1/personas/{persona_id}"]["delete"]["security"] == [
        {"bearer": ["admin"]}, {"apiKey": ["admin"]}]
    assert "security" not in paths["/ok"]["get"]
    schemes = document["components"]["securitySchemes"]
    assert schemes["apiKey"] == {"type": "apiKey", "in": "header", "name": "x-api-key",
                                 "description": schemes["apiKey"]["description"]}
    assert schemes["bearer"]["scheme"] == "bearer"
