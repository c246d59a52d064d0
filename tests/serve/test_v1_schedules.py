"""``/v1/schedules``: the workers' schedules of the key's personas, on a PostgreSQL store;
a SQLite store has no queue and says so (409)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.v1app import App, serving
from tests.workers.conftest import DSN, drop_schema


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[App]:
    with serving(tmp_path) as app:
        yield app


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[App]:
    """The app on a PostgreSQL store of a fresh schema (dropped afterwards)."""
    assert DSN is not None
    schema = f"v1_{uuid.uuid4().hex[:10]}"
    separator = "&" if "?" in DSN else "?"
    try:
        with serving(tmp_path, f"{DSN}{separator}schema={schema}") as app:
            yield app
    finally:
        drop_schema(schema)


def test_a_sqlite_store_has_no_schedules_and_says_why(v1: App) -> None:
    for method, path in (("get", "/v1/schedules"), ("post", "/v1/schedules"),
                         ("delete", "/v1/schedules/x")):
        answer = v1.call(method, path, body={"persona": "aoi", "playbook": "chat",
                                             "every": "1h"})
        assert answer.status_code == 409, path
        assert answer.json()["error"]["code"] == "SEA890"
        assert "PostgreSQL" in answer.json()["error"]["message"]


def test_schedule_routes_need_their_roles_before_anything(v1: App) -> None:
    body = {"persona": "aoi", "playbook": "chat", "every": "1h"}
    assert v1.call("get", "/v1/schedules", "k-none").status_code == 403
    assert v1.call("post", "/v1/schedules", "k-read", body).status_code == 403
    assert v1.call("delete", "/v1/schedules/x", "k-read").status_code == 403
    foreign = v1.call("post", "/v1/schedules", "k-globex", body)
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "SEA820"


@pytest.mark.postgres
@pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_schedules_are_added_listed_and_removed_per_tenant(pg: App) -> None:
    assert pg.get("/v1/schedules").json() == {"items": []}  # no queue yet: nothing
    made = pg.post("/v1/schedules", json={"persona": "aoi", "playbook": "chat",
                                          "every": "10m", "input": "check in"})
    assert made.status_code == 201, made.text
    schedule = made.json()
    assert (schedule["persona"], schedule["playbook"], schedule["every_s"]) == (
        "aoi", "chat", 600.0)
    theirs = pg.post("/v1/schedules", "k-globex", json={"persona": "zed",
                                                         "playbook": "chat", "every": "1h"})
    assert theirs.status_code == 201
    assert [s["id"] for s in pg.get("/v1/schedules", "k-read").json()["items"]] == [
        schedule["id"]]
    assert pg.get("/v1/schedules", params={"persona": "zed"}).json()["items"] == []
    hidden = pg.delete(f"/v1/schedules/{theirs.json()['id']}")
    assert hidden.status_code == 404  # another tenant's schedule
    too_often = pg.post("/v1/schedules", json={"persona": "aoi", "playbook": "chat",
                                               "every": "0s"})
    assert too_often.status_code == 422 and too_often.json()["error"]["code"] == "SEA363"
    unknown = pg.post("/v1/schedules", json={"persona": "aoi", "playbook": "nope",
                                             "every": "1h"})
    assert unknown.status_code == 404
    assert pg.delete(f"/v1/schedules/{schedule['id']}").json() == {"removed": schedule["id"]}
    assert pg.get("/v1/schedules").json()["items"] == []
