"""The studio's approvals inbox and plan review in a real browser: an ``--ask-before``
approval answered from the live inbox, and a plan of two specs approved for spec 1 only."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.studio.conftest import Studio

pytestmark = pytest.mark.browser


def persona(http: httpx.Client, name: str) -> str:
    """A persona of its own for one test (the session's server is shared)."""
    made = http.post("/v1/personas", json={"id": name, "name": name})
    assert made.status_code in (201, 409), made.text
    return name


def test_the_inbox_shows_a_pulse_that_starts_waiting_and_approving_ends_it(
        studio: Studio, http: httpx.Client) -> None:
    from playwright.sync_api import expect

    who = persona(http, "inbox-b")
    page = studio.open("#/approvals?persona=inbox-b")
    expect(page.get_by_role("heading", name="Approvals")).to_be_visible()
    expect(page.get_by_text("Nothing is waiting.")).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="Live")).to_be_visible()
    started = http.post(f"/v1/personas/{who}/pulses", json={"input": "look", "playbook": "asking"})
    assert started.status_code == 202, started.text
    pulse_id = started.json()["pulse_id"]
    requests = page.get_by_role("list", name="Waiting requests")
    card = requests.get_by_role("listitem").filter(has_text="asking.look")
    expect(card).to_have_attribute("data-pulse", pulse_id)  # arrived live, no reload
    expect(card.get_by_role("heading")).to_have_text("Gated tool: asking.look")
    expect(card).to_contain_text("memory_recent")
    card.get_by_label("Reason (optional)").fill("見てよい")
    studio.shot("inbox")
    card.get_by_role("button", name="Approve").click()
    decided = page.get_by_role("list", name="Decisions").get_by_role("listitem")
    expect(decided.get_by_role("heading")).to_have_text("Approved: asking.look")
    expect(decided).to_contain_text("Approverdev")
    expect(decided).to_contain_text("見てよい")
    expect(decided.locator(".badge")).to_have_text("ok")  # the pulse ended
    expect(page.get_by_text("Nothing is waiting.")).to_be_visible()
    studio.shot("inbox-decided")
    shown = http.get(f"/v1/pulses/{pulse_id}").json()
    assert shown["pulse_status"] == "ok"
    assert shown["decisions"][0]["answer"] == {"approved": True, "approver": "dev",
                                               "reason": "見てよい"}


def seed_plan(studio: Studio, who: str) -> str:
    """A plan of two specs (a new file, low risk; an overwrite, medium) in the server's
    store and workspace, as the persona's model would have made it."""
    from saimemory.sqlite import SQLiteStore
    from sea.engine.plans import PlanService

    workspace = studio.server.root / "workspace"
    (workspace / "old.txt").write_text("old\nkeep\n")
    store = SQLiteStore(studio.server.root / "memory.sqlite")
    try:
        service = PlanService(store, who, workspace)
        plan_id = service.propose("ノートを書く", "write the notes").plan_id
        report = service.set_action_specs(plan_id, [
            {"kind": "create", "path": "notes/a.md", "content": "一行目\nb\n"},
            {"kind": "write", "path": "old.txt", "content": "new\nkeep\n"}])
        assert report.ok
        return plan_id
    finally:
        store.close()


def test_a_plan_review_approves_spec_1_only_and_the_plan_records_exactly_that(
        studio: Studio, http: httpx.Client) -> None:
    from playwright.sync_api import expect

    who = persona(http, "planner-b")
    plan_id = seed_plan(studio, who)
    page = studio.open(f"#/plans/{who}/{plan_id}")
    expect(page.get_by_role("heading", level=1)).to_have_text("ノートを書く")
    specs = page.get_by_role("table", name="Specs")
    expect(specs.get_by_role("row")).to_have_count(3)
    expect(specs.locator('[data-spec="2"]')).to_contain_text("medium")
    first = page.get_by_role("table", name="Diff of notes/a.md: 2 added, 0 removed")
    expect(first.locator("tr.diff-add")).to_have_count(2)
    second = page.get_by_role("table", name="Diff of old.txt: 1 added, 1 removed")
    expect(second.locator("td.code code")).to_have_text(
        ["--- a/old.txt", "+++ b/old.txt", "@@ -1,2 +1,2 @@", "-old", "+new", " keep"])
    expect(second.locator("tr.diff-del")).to_contain_text("removed: -old")
    expect(second.locator("tr.diff-add")).to_contain_text("added: +new")
    expect(second.locator("tr.diff-context")).to_contain_text("unchanged:  keep")
    page.get_by_label("Select spec 1 (create notes/a.md)").check()
    approve = page.get_by_role("button", name="Approve selected (1)")
    expect(approve).to_be_enabled()
    studio.shot("plan-review")
    approve.click()
    expect(page.get_by_role("status").filter(has_text="Approved by")).to_have_text(
        "Approved by dev: specs 1; the plan is approved.")
    trail = page.get_by_role("table", name="Approvals")
    expect(trail.locator("tr.approval-row")).to_have_count(1)
    expect(trail.locator("tr.approval-row td").nth(0)).to_have_text("dev")
    expect(trail.locator("tr.approval-row td time")).to_have_count(1)  # when, in the viewer's zone
    expect(trail.locator("tr.approval-row td").nth(2)).to_have_text("specs 1")
    stored: dict[str, Any] = http.get(f"/v1/personas/{who}/plans/{plan_id}").json()
    approvals = stored["state"]["approvals"]
    assert [(a["approver"], a["selection"]) for a in approvals] == [
        ("dev", {"all": False, "ids": ["1"]})]
    assert stored["state"]["status"] == "approved"
