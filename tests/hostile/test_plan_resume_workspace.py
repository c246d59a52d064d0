"""Attacks on ``sea resume`` of a plan approval: the waiting pulse records the workspace its
plan was made for, and a resume without it, or with another, is refused before the answer is
taken, so the request still waits for a resume in the right workspace."""

from __future__ import annotations

import pytest

from tests.trace.conftest import Sea
from tests.trace.conftest import sea as sea  # the fixture
from tests.trace.test_cli_plans import OUTLINE, SCRIPT, run, workspace


@pytest.mark.parametrize("where", ["none", "other"])
def test_a_plan_approval_is_not_taken_in_another_workspace(sea: Sea, where: str) -> None:
    code, result, err = run(sea)
    assert code == 0 and result["status"] == "waiting", err
    pulse = result["pulse_id"]
    other = sea.root / "other"
    other.mkdir()
    given = ("--workspace", str(other)) if where == "other" else ()
    wrong = sea("resume", pulse, "--approve", *given, "--model", sea.script(SCRIPT))
    assert wrong.code == 2, wrong.out + wrong.err
    assert str(workspace(sea).resolve()) in wrong.err and "--workspace" in wrong.err
    assert "Traceback" not in wrong.err
    assert list(other.iterdir()) == []  # nothing done there
    assert not (workspace(sea) / "notes").exists()
    # the request still waits: the right workspace takes it
    right = sea("resume", pulse, "--approve", "--workspace", str(workspace(sea)),
                "--model", sea.script(SCRIPT))
    assert right.code == 0, right.err
    assert (workspace(sea) / "notes" / "outline.md").read_text() == OUTLINE


def test_the_same_workspace_by_another_spelling_is_accepted(sea: Sea) -> None:
    code, result, err = run(sea)
    assert code == 0 and result["status"] == "waiting", err
    link = sea.root / "ws-link"
    link.symlink_to(workspace(sea), target_is_directory=True)
    right = sea("resume", result["pulse_id"], "--approve", "--workspace", f"{link}/.",
                "--model", sea.script(SCRIPT))
    assert right.code == 0, right.err
    assert (workspace(sea) / "notes" / "outline.md").read_text() == OUTLINE
