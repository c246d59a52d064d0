"""Every route of the real ``sea serve`` (a process on a loopback port), checked by the
route-enumeration check of tests/serve/isolation.py: without a key 401, lacking its role
403, on another tenant's persona, thread, run or pulse 404 as for an unknown one.

It needs the server's test harness (tests/serve/server.py) and a server that accepts the
store's keys (``create_app``'s ``Auth(KeyStore(ctx.db), dev_token=token)``); it is skipped
where the harness is missing. A route added later is in the OpenAPI document, so it is
checked: give its body here if it takes one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from sea.serve.db import ServerDB
from sea.serve.keys import KeyStore
from tests.serve.isolation import PUBLIC, Isolation, check_isolation, store_keys

harness = pytest.importorskip("tests.serve.server", reason="the sea serve test harness")

RUN = {"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": "hi"}]}}
BODIES = {
    "POST /threads/{thread_id}/runs": RUN,
    "POST /threads/{thread_id}/runs/stream": RUN,
    "POST /threads/{thread_id}/runs/wait": RUN,
    "PATCH /threads/{thread_id}": {"metadata": {"note": "x"}},
    "POST /threads/{thread_id}/history": {"limit": 5},
    "POST /v1/personas/{persona_id}/pulses": {"input": "hi"},
    "POST /v1/pulses/{pulse_id}/resume": {"answer": True},
    "POST /v1/personas/{persona_id}/pins": {"text": "a pin"},
    "POST /v1/validate": {"text": "[]"},
    "POST /v1/schedules": {"persona": "{persona_id}", "playbook": "chat", "every": "1h"},
    "POST /v1/personas/{persona_id}/plans/{plan_id}/approve": {"reason": "fine"},
    "POST /v1/personas/{persona_id}/plans/{plan_id}/reject": {"reason": "no"},
}
QUERIES = {"GET /v1/personas/{persona_id}/search": {"q": "hello"},
           "GET /v1/evals/{run_id}/compare": {"baseline": "{run_id}"}}
SHARED = {"assistant_id": "agent", "checkpoint_id": "no-such-checkpoint", "name": "chat",
          "plan_id": "no-such-plan", "pin_id": "1", "schedule_id": "no-such-schedule"}
"""Path parameters that are not a tenant's: the same value for every key."""


def tenant_objects(client: httpx.Client, tenant: str, key: str) -> dict[str, str]:
    """A persona of the tenant, a conversation of it and one finished run: their ids."""
    headers = {"x-api-key": key}
    persona = f"{tenant}-aoi"
    made = client.post("/v1/personas", json={"id": persona, "name": "Aoi"}, headers=headers)
    assert made.status_code in (200, 201), made.text
    thread = client.post("/threads", json={"metadata": {"persona": persona}}, headers=headers)
    assert thread.status_code == 200, thread.text
    thread_id = thread.json()["thread_id"]
    run = client.post(f"/threads/{thread_id}/runs/wait", json=RUN, headers=headers)
    assert run.status_code == 200, run.text
    runs: list[dict[str, Any]] = client.get(f"/threads/{thread_id}/runs", headers=headers).json()
    pulses = client.get("/v1/pulses", headers=headers).json()["items"]
    return {"persona_id": persona, "thread_id": thread_id, "run_id": runs[0]["run_id"],
            "pulse_id": pulses[0]["id"]}


def test_every_route_of_the_server_isolates_tenants(tmp_path: Path) -> None:
    server = harness.start_server(tmp_path)
    db = ServerDB(str(tmp_path / "memory.sqlite"))
    try:
        keys = KeyStore(db)
        acme = store_keys(keys, tenant="acme")
        _, globex = keys.add("globex-admin", ["admin"], tenant="globex")
        with httpx.Client(base_url=server.url, timeout=30) as client:
            own = tenant_objects(client, "acme", acme(frozenset({"admin"})))
            foreign = tenant_objects(client, "globex", globex)
            report = check_isolation(client, Isolation(
                own={**own, **SHARED}, foreign=foreign, key_for=acme,
                public=(*PUBLIC, "GET /info"), bodies=BODIES, queries=QUERIES))
    finally:
        db.close()
        server.stop()
    assert report.failures == []
    assert len(report.checked) >= 40
