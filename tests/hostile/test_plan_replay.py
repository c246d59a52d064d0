"""A recorded plan pulse replays: the pulse waited for a person's answer about its plan (or
was answered at once), and the replay waits and is answered the same way, so it takes the
recorded path instead of diverging at the approval."""

from __future__ import annotations

import orjson
import pytest

from tests.trace.conftest import Sea
from tests.trace.conftest import sea as sea  # the fixture
from tests.trace.test_cli_plans import run


@pytest.mark.parametrize("answer", [("--approve", "all"), ("--approve", "low"), ("--deny",),
                                    ()])
def test_a_recorded_plan_pulse_replays(sea: Sea, answer: tuple[str, ...]) -> None:
    trace = sea.root / "pulse.json"
    code, result, err = run(sea, *answer, "--record", str(trace))
    assert code == 0, err
    recorded = orjson.loads(trace.read_bytes())
    assert recorded["status"] == ("waiting" if not answer else "ok")
    done = sea("replay", str(trace))
    assert done.code == 0, done.out
    assert "replay matched" in done.out
    settled = recorded["settled"]
    assert [entry["tool"] for entry in settled] == (["plan_request_approval"] if answer
                                                    else [])
    if answer:
        assert settled[0]["asked"] is True
        assert settled[0]["value"]["approved"] is (answer[0] == "--approve")


def test_a_replay_whose_playbook_settles_otherwise_diverges(sea: Sea) -> None:
    trace = sea.root / "pulse.json"
    code, _, err = run(sea, "--approve", "all", "--record", str(trace))
    assert code == 0, err
    recorded = orjson.loads(trace.read_bytes())
    recorded["settled"][0]["value"]["approved"] = False  # as if the person had refused
    trace.write_bytes(orjson.dumps(recorded))
    done = sea("replay", str(trace))
    assert done.code == 1 and "replay diverged" in done.out
