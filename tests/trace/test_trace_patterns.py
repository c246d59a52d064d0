"""A trace shows each call's prompt pattern and context parts, keeps the persona's pinned
items, and a replay pins them again so the pulse replays as recorded."""

from __future__ import annotations

import orjson

from tests.trace.conftest import Sea


def test_pins_and_context_parts_are_recorded_and_replayed(sea: Sea) -> None:
    pinned = sea("memory", "pin", "Ken loves hiking.")
    assert pinned.code == 0, pinned.err
    trace = sea.root / "trace.json"
    done = sea("run", "--input", "Hello", "--model", sea.script(), "--record", str(trace))
    assert done.code == 0, done.err
    data = orjson.loads(trace.read_bytes())
    assert data["pins"] == ["Ken loves hiking."]
    speak = next(c for c in data["llm_calls"] if c["node"] == "compose")
    assert speak["pattern"] == "base_main" and speak["model_kind"] == "normal"
    parts = [part["part"] for part in speak["context"]]
    assert parts == ["base", "pins", "history"]
    assert all(part["tokens"] > 0 for part in speak["context"])
    assert "- Ken loves hiking." in speak["messages"][0]["content"]

    replayed = sea("replay", str(trace))
    assert replayed.code == 0, replayed.out + replayed.err
    assert replayed.out.startswith("replay matched:")
