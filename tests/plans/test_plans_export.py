"""Export: seed 002's files (plan.json, approval.json, the diffs, index.json), written from
the store."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from saimemory.base import MessageStore
from saimemory.plan_codec import plan_from_dict
from sea.engine.plans import PlanService, export_plan, export_plans
from sea.errors import PlanError, PlanNotFound


def test_export_writes_the_seed_files_from_the_store(
    service: PlanService, store: MessageStore, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "n.md").write_text("one\n")
    older = service.propose("older", "c").plan_id
    plan_id = service.propose("Outline", "content", tags=["game"]).plan_id
    service.set_action_specs(plan_id, [
        {"kind": "write", "path": "n.md", "content": "two\n"},
        {"kind": "mkdir", "path": "d"},
        {"kind": "create", "path": "d/new.md", "content": "new\n"},
    ])
    service.approve(plan_id, "ken", {"ids": ["1", "3"]})
    out = tmp_path / "plans"
    written = export_plan(store, "aoi", plan_id, out)
    folder = out / plan_id
    assert written == [folder / "plan.json", folder / "approval.json",
                       folder / "preview" / "1.diff", folder / "preview" / "3.diff",
                       out / "index.json"]
    stored = store.get_plan("aoi", plan_id)
    assert plan_from_dict(json.loads((folder / "plan.json").read_text())) == stored
    approval = json.loads((folder / "approval.json").read_text())
    assert approval["plan_id"] == plan_id and approval["status"] == "approved"
    assert approval["selection"] == {"all": False, "ids": ["1", "3"]}
    assert [a["approver"] for a in approval["approvals"]] == ["ken"]
    assert set(approval["approvals"][0]["fingerprints"]) == {"1", "3"}
    assert (folder / "preview" / "1.diff").read_text() == (
        "--- a/n.md\n+++ b/n.md\n@@ -1 +1 @@\n-one\n+two\n")
    assert (folder / "preview" / "3.diff").read_text().startswith("--- /dev/null\n+++ b/d/new")
    index = json.loads((out / "index.json").read_text())
    assert index["persona"] == "aoi" and index["current"] == plan_id
    assert [(p["id"], p["title"], p["status"], p["specs"]) for p in index["plans"]] == [
        (plan_id, "Outline", "approved", 3), (older, "older", "proposed", 0)]
    assert index["plans"][0]["version"] == stored.version


def test_export_again_replaces_stale_diffs(
    service: PlanService, store: MessageStore, tmp_path: Path
) -> None:
    plan_id = service.propose("t", "c").plan_id
    service.set_action_specs(plan_id, [{"kind": "create", "path": "a", "content": "a\n"},
                                       {"kind": "create", "path": "b", "content": "b\n"}])
    export_plan(store, "aoi", plan_id, tmp_path)
    service.preview(plan_id, {"ids": ["2"]})
    export_plan(store, "aoi", plan_id, tmp_path)
    assert sorted(p.name for p in (tmp_path / plan_id / "preview").iterdir()) == ["2.diff"]


def test_export_plans_writes_every_plan(
    service: PlanService, store: MessageStore, tmp_path: Path
) -> None:
    ids = [service.propose(f"p{i}", "c").plan_id for i in range(3)]
    out = tmp_path / "export"
    written = export_plans(store, "aoi", out)
    assert sorted(p.name for p in out.iterdir()) == sorted([*ids, "index.json"])
    assert written[-1] == out / "index.json"
    assert all((out / plan_id / "plan.json").is_file() for plan_id in ids)


def test_unknown_plans_and_unsafe_ids_are_refused(
    service: PlanService, store: MessageStore, tmp_path: Path
) -> None:
    with pytest.raises(PlanNotFound):
        export_plan(store, "aoi", "nope", tmp_path)
    plan = store.get_plan("aoi", service.propose("t", "c").plan_id)
    store.save_plan(replace(plan, id="..", version=0))
    with pytest.raises(PlanError, match="cannot be used as a file name"):
        export_plan(store, "aoi", "..", tmp_path / "out")
    assert not (tmp_path / "plan.json").exists()
