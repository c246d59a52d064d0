"""A recorded pulse whose history budget cut earlier conversation replays as it ran: the trace
keeps the short-term memory and the cut messages Main was composed from, and the light
model's update of the summary is answered from the recording."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from saimemory import CONVERSATION_TAG, NewMessage
from saimemory.base import DEFAULT_BUDGET
from saimemory.records import Role
from saimemory.sqlite import SQLiteStore
from sea.llm.compose import SUMMARY_HEADING
from tests.trace.conftest import SCRIPT, Sea

FOLD = "sub_router_user.decide:short_term_memory"
CUT = 6
"""How many conversation messages lie beyond the default history budget."""


def seeded(sea: Sea, *, summary: str | None, covering: int) -> list[int]:
    """The default persona's store with more conversation than the history budget holds and,
    with ``summary``, a short-term memory covering the first ``covering`` messages."""
    home = sea.root / "home"
    home.mkdir(exist_ok=True)
    store = SQLiteStore(home / "memory.sqlite")
    try:
        ids = []
        for index in range(DEFAULT_BUDGET.max_messages + CUT):
            role: Role = "user" if index % 2 == 0 else "assistant"
            message = NewMessage("aoi", role, f"message {index}", pulse_id=f"old{index}",
                                 tags=(CONVERSATION_TAG,))
            ids.append(store.append(message).id)
        if summary is not None:
            store.save_short_term("aoi", summary, ids[covering - 1])
    finally:
        store.close()
    return ids


def recorded(sea: Sea, script: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    trace = sea.root / "trace.json"
    # a memory question leaves the router two candidates: its model is the first call, and folds
    done = sea("run", "--input", "Do you remember my cat?", "--model", sea.script(script),
               "--record", str(trace))
    assert done.code == 0, done.err
    return trace, orjson.loads(trace.read_bytes())


def folding_script() -> dict[str, Any]:
    responses = dict(SCRIPT["responses"])
    responses[FOLD] = ["Ken and Aoi talked about messages 0 to 5."]
    return {"responses": responses}


def calls(data: dict[str, Any]) -> list[str]:
    return [f"{c['playbook']}.{c['node']}" for c in data["llm_calls"]]


def test_a_pulse_that_folds_the_cut_history_replays_without_divergence(sea: Sea) -> None:
    seeded(sea, summary="They met.", covering=2)
    trace, data = recorded(sea, folding_script())
    assert calls(data) == [FOLD, "sub_router_user.decide", "sub_speak.compose"]
    short_term = data["short_term"]
    assert short_term["summary"] == "They met." and short_term["covered"] is False
    assert [m["content"] for m in short_term["cut"]] == [f"message {i}" for i in range(2, CUT)]
    speak = data["llm_calls"][2]["messages"][0]["content"]
    assert f"{SUMMARY_HEADING}\nKen and Aoi talked about messages 0 to 5." in speak

    replayed = sea("replay", str(trace))
    assert replayed.code == 0, replayed.out + replayed.err
    assert replayed.out.startswith("replay matched:") and "3 model calls" in replayed.out


def test_a_summary_that_covers_the_cut_is_shown_again_on_replay(sea: Sea) -> None:
    seeded(sea, summary="Messages 0 to 5, summarized.", covering=CUT)
    trace, data = recorded(sea, SCRIPT)
    assert calls(data) == ["sub_router_user.decide", "sub_speak.compose"]  # nothing to fold
    assert data["short_term"]["covered"] is True
    assert [m["content"] for m in data["short_term"]["cut"]] == [f"message {CUT - 1}"]
    assert "Messages 0 to 5, summarized." in data["llm_calls"][0]["messages"][0]["content"]

    replayed = sea("replay", str(trace))
    assert replayed.code == 0, replayed.out + replayed.err


TAMPERINGS: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "the summary": (lambda data: data["short_term"].update(summary="They argued."), FOLD),
    "the light model's answer": (
        lambda data: data["llm_calls"][0].update(response="Something else entirely."),
        "sub_router_user.decide",
    ),
    "no short-term memory": (lambda data: data.update(short_term=None), FOLD),
}


def test_a_tampered_recording_diverges_at_the_call_it_changes(sea: Sea) -> None:
    seeded(sea, summary="They met.", covering=2)
    trace, data = recorded(sea, folding_script())
    for name, (tamper, diverged_at) in TAMPERINGS.items():
        changed = orjson.loads(orjson.dumps(data))
        tamper(changed)
        trace.write_bytes(orjson.dumps(changed))
        replayed = sea("replay", str(trace))
        assert replayed.code == 1, name
        assert f"replay diverged at {diverged_at}: " in replayed.out, (name, replayed.out)
