"""The route-enumeration check (tests/serve/isolation.py) on a small guarded app: it passes
a well-guarded app, and it catches each way a route can fail to isolate tenants."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from sea.serve.auth import Auth
from sea.serve.keys import KeyStore
from tests.serve.authkit import BACKENDS, demo_app, server_db
from tests.serve.isolation import PUBLIC, Isolation, Report, check_isolation, store_keys

BODIES = {"POST /v1/personas/{persona_id}/pulses": {"input": "hello from {persona_id}"},
          "POST /v1/approvals/{thread_id}": {"approve": True}}
GUARDED = {"GET /v1/personas", "GET /v1/personas/{persona_id}",
           "DELETE /v1/personas/{persona_id}", "POST /v1/personas/{persona_id}/pulses",
           "POST /threads/{thread_id}/runs/{run_id}/cancel", "POST /v1/approvals/{thread_id}"}


@pytest.fixture(params=BACKENDS)
def keys(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KeyStore]:
    with server_db(request.param, tmp_path) as db:
        yield KeyStore(db)


def isolation(keys: KeyStore, bodies: dict[str, Any] | None = None) -> Isolation:
    return Isolation(
        own={"persona_id": "acme-aoi", "thread_id": "t-acme-1", "run_id": "r1"},
        foreign={"persona_id": "globex-kai", "thread_id": "t-globex-1"},
        key_for=store_keys(keys, tenant="acme"),
        bodies=BODIES if bodies is None else bodies)


def check(keys: KeyStore, bodies: dict[str, Any] | None = None, **flaws: bool) -> Report:
    app = demo_app(Auth(keys, cache_seconds=0), **flaws)
    client = TestClient(app, raise_server_exceptions=False)
    return check_isolation(client, isolation(keys, bodies), app=app)


@contextmanager
def served(app: FastAPI) -> Iterator[str]:
    """The app on a real server (uvicorn on a free loopback port), for as long as needed."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def test_a_guarded_app_passes_and_every_operation_is_called(keys: KeyStore) -> None:
    report = check(keys)
    assert report.failures == []
    assert set(report.checked) == GUARDED | {"GET /ok"}
    names = {key.name for key in keys.list()}
    assert "iso-acme-admin-approve-author-memory-read-run" in names  # the tenant-crossing key
    assert "iso-acme-approve-author-memory-read" in names  # lacks run


def test_a_route_without_the_tenant_check_is_caught(keys: KeyStore) -> None:
    report = check(keys, leaky=True)
    assert len(report.failures) == 1
    assert report.failures[0].startswith(
        "POST /v1/personas/{persona_id}/pulses on another tenant's persona_id: 200, not 404")


def test_a_route_without_a_role_is_caught(keys: KeyStore) -> None:
    report = check(keys, unguarded=True)
    assert report.failures == [
        "GET /v1/personas/{persona_id}/memory: needs no role (no require() dependency); "
        "guard it, or list it as public"]


def test_a_route_that_tells_another_tenant_s_persona_exists_is_caught(keys: KeyStore) -> None:
    report = check(keys, tattling=True)
    assert len(report.failures) == 1
    assert report.failures[0].startswith("GET /v1/personas/{persona_id}/stats: another "
                                         "tenant's ids answer")
    assert "belongs to another tenant" in report.failures[0]


def test_a_route_left_out_of_the_document_is_caught(keys: KeyStore) -> None:
    report = check(keys, hidden=True)
    assert report.failures == ["GET /v1/secret: left out of the OpenAPI document, so unchecked"]


def test_a_leaky_endless_stream_is_caught_on_a_real_server(keys: KeyStore) -> None:
    app = demo_app(Auth(keys, cache_seconds=0), streaming=True)
    with served(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        started = time.monotonic()
        report = check_isolation(client, isolation(keys), app=app)
    assert time.monotonic() - started < 10
    assert report.failures == [
        "GET /threads/{thread_id}/stream on another tenant's thread_id: 200, not 404: "
        "<an event stream>"]


def test_an_operation_it_cannot_call_is_a_failure_that_says_what_to_give(
        keys: KeyStore) -> None:
    report = check(keys, bodies={})
    assert len(report.failures) == 2
    assert all("422, not 404 (give its body or query" in failure
               for failure in report.failures)


def test_a_mount_is_reported_unless_public(keys: KeyStore) -> None:
    app = demo_app(Auth(keys, cache_seconds=0))
    app.mount("/studio", FastAPI())
    client = TestClient(app, raise_server_exceptions=False)
    base = isolation(keys)
    report = check_isolation(client, base, app=app)
    assert [failure.split(":")[0] for failure in report.failures] == ["MOUNT /studio"]
    public = replace(base, public=(*PUBLIC, "MOUNT /studio"))
    assert check_isolation(client, public, app=app).failures == []
