"""``/v1/personas/{id}/plans``: list, show, preview, approve (all, some, up to a risk),
reject and execute a persona's plans through the engine's plan service, as ``sea plan``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sea.engine.plans import PlanService
from tests.serve.v1app import App, serving

BASE = "/v1/personas/aoi/plans"


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[App]:
    with serving(tmp_path) as app:
        yield app


def plan_of(v1: App) -> str:
    """A plan of aoi with two specs: a new file (low risk), an overwrite (medium)."""
    (v1.workspace / "old.txt").write_text("old\n")
    service = PlanService(v1.ctx.store, "aoi", v1.workspace)
    plan_id = service.propose("Notes", "write the notes").plan_id
    report = service.set_action_specs(plan_id, [
        {"kind": "create", "path": "notes/a.md", "content": "a\n"},
        {"kind": "write", "path": "old.txt", "content": "new\n"}])
    assert report.ok
    return plan_id


def test_plans_are_listed_shown_and_previewed_with_diffs(v1: App) -> None:
    plan_id = plan_of(v1)
    items = v1.get(BASE, "k-read").json()["items"]
    assert [(p["id"], p["status"], p["specs"]) for p in items] == [(plan_id, "pending_review", 2)]
    assert v1.get(BASE, params={"status": "approved"}).json()["items"] == []
    shown = v1.get(f"{BASE}/{plan_id}", "k-read").json()
    assert shown["id"] == plan_id and shown["title"] == "Notes"
    assert [s["base"]["path"] for s in shown["state"]["action_specs"]] == ["notes/a.md",
                                                                          "old.txt"]
    assert v1.get(f"{BASE}/current").json()["id"] == plan_id
    preview = v1.post(f"{BASE}/{plan_id}/preview", "k-read", json={}).json()
    diffs = {d["path"]: d for d in preview["diffs"]}
    assert diffs["old.txt"]["risk"] == "medium" and "+new" in diffs["old.txt"]["diff"]
    assert diffs["notes/a.md"]["risk"] == "low"
    assert preview["request_id"] and preview["risk_score"] > 0
    again = v1.post(f"{BASE}/{plan_id}/preview", json={}).json()
    assert again["request_id"] == preview["request_id"]  # the open request is named
    missing = v1.get(f"{BASE}/nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "SEA820"


def test_an_approval_up_to_a_risk_is_the_keys_and_runs(v1: App) -> None:
    plan_id = plan_of(v1)
    v1.post(f"{BASE}/{plan_id}/preview", json={})
    forged = v1.post(f"{BASE}/{plan_id}/approve", json={"approver": "mallory"})
    assert forged.status_code == 422  # the approver is never the client's to name
    approved = v1.post(f"{BASE}/{plan_id}/approve", json={"up_to": "low", "reason": "ok"})
    assert approved.status_code == 200, approved.text
    body = approved.json()
    assert body["status"] == "approved" and body["approver"] == "alice"
    assert body["selection"]["all"] is False and len(body["selection"]["ids"]) == 1
    stored = v1.get(f"{BASE}/{plan_id}").json()["state"]["approvals"][-1]
    assert stored["approver"] == "alice" and stored["actor"] == "user"
    executed = v1.post(f"{BASE}/{plan_id}/execute").json()
    assert executed["overall_success"] and executed["outcome"] == "completed"
    assert (v1.workspace / "notes" / "a.md").read_text() == "a\n"
    assert (v1.workspace / "old.txt").read_text() == "old\n"  # not approved, not run


def test_a_stale_approval_is_refused_and_a_plan_can_be_sent_back(v1: App) -> None:
    plan_id = plan_of(v1)
    shown = v1.post(f"{BASE}/{plan_id}/preview", json={}).json()["request_id"]
    stale = v1.post(f"{BASE}/{plan_id}/approve", json={"request_id": "elsewhere"})
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "SEA587"
    assert v1.get(f"{BASE}/{plan_id}").json()["state"]["status"] == "pending_review"
    both = v1.post(f"{BASE}/{plan_id}/approve", json={"ids": ["1"], "up_to": "low"})
    assert both.status_code == 422
    rejected = v1.post(f"{BASE}/{plan_id}/reject", json={"reason": "not now"})
    assert rejected.json() == {"plan_id": plan_id, "status": "proposed"}
    refused = v1.post(f"{BASE}/{plan_id}/execute")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "SEA584"
    assert shown


def test_without_a_workspace_the_routes_that_read_files_say_how_to_give_one(v1: App) -> None:
    plan_id = plan_of(v1)
    v1.client.app.state.v1.workspace = None  # type: ignore[attr-defined]
    assert v1.get(f"{BASE}/{plan_id}").status_code == 200
    for action in ("preview", "approve", "reject", "execute"):
        answer = v1.post(f"{BASE}/{plan_id}/{action}", json={})
        assert answer.status_code == 409, action
        assert answer.json()["error"]["code"] == "SEA890"
        assert "--workspace" in answer.json()["error"]["message"]


def test_plan_routes_need_their_roles_and_hide_other_tenants(v1: App) -> None:
    plan_id = plan_of(v1)
    reads = [("get", BASE), ("get", f"{BASE}/{plan_id}"), ("post", f"{BASE}/{plan_id}/preview")]
    writes = [("post", f"{BASE}/{plan_id}/{a}") for a in ("approve", "reject", "execute")]
    for method, path in reads + writes:
        assert v1.call(method, path, "k-none").status_code == 403, path
        answer = v1.call(method, path, "k-globex")
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "SEA820", path
        assert v1.call(method, path.replace("/aoi/", "/zed/")).status_code == 404, path
    for method, path in writes:
        assert v1.call(method, path, "k-read").status_code == 403, path
