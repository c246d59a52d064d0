"""Every route of the playbook, plan, memory, stats, schedule, trace and eval routers, read
from the OpenAPI document (so a new one cannot be forgotten): without a key 401, with a key
lacking its role 403, with another tenant's key on a persona's route 404."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.v1app import App, serving

TAGS = {"playbooks", "plans", "memory", "stats", "schedules", "evals"}
EXTRA = {"/v1/pulses/{pulse_id}/trace"}
VALUES = {"persona_id": "aoi", "plan_id": "current", "pin_id": "1", "name": "chat",
          "pulse_id": "p1", "schedule_id": "s1", "run_id": "r1"}
BODIES: dict[str, dict[str, str]] = {
    "/v1/validate": {"text": "{}"},
    "/v1/personas/{persona_id}/pins": {"text": "a fact"},
    "/v1/schedules": {"persona": "aoi", "playbook": "chat", "every": "1h"},
}
"""A valid body of the routes that need one (the others take ``{}``)."""
QUERIES = {"/v1/personas/{persona_id}/search": "?q=words",
           "/v1/evals/{run_id}/compare": "?baseline=r0"}


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[App]:
    with serving(tmp_path) as app:
        yield app


def routes(v1: App) -> list[tuple[str, str]]:
    """(method, path template) of every route of these routers."""
    document: dict[str, Any] = v1.client.get("/openapi.json").json()
    found = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            if TAGS & set(operation.get("tags", ())) or path in EXTRA:
                found.append((method, path))
    return found


def test_every_route_needs_a_key_and_its_role_and_hides_other_tenants(v1: App) -> None:
    found = routes(v1)
    assert len(found) >= 20 and ("get", "/v1/pulses/{pulse_id}/trace") in found
    for method, template in found:
        path = template.format(**VALUES) + QUERIES.get(template, "")
        body = BODIES.get(template, {})
        nobody = v1.client.request(method.upper(), path, json=body)
        assert nobody.status_code == 401, (method, path)
        assert v1.call(method, path, "k-none", body).status_code == 403, (method, path)
        if "{persona_id}" in template:
            foreign = v1.call(method, path, "k-globex", body)
            assert foreign.status_code == 404, (method, path, foreign.text)
            assert foreign.json()["error"]["code"] == "SEA820"
