from __future__ import annotations

from saimemory.records import Persona
from tests.engine.conftest import MakeRuntime


def test_set_pass_loop_counts_to_limit(make_runtime: MakeRuntime, persona: Persona) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "counter_loop", "go", args={"limit": 4})
    assert result.status == "ok", result.error
    assert result.outputs == {"count": 4, "label": "n=4"}
