"""The bundled local model analyzes an intent with ``sub_intent`` under the grammar
constraint: the answer has the seed's fields, its enums and its confidence range, and the
pattern is the seed's rule's (needs the `local` extra)."""

from __future__ import annotations

from pathlib import Path

from saimemory.sqlite import SQLiteStore
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.intent import ACTION_TYPES, COMPLEXITIES, select_prompt_pattern
from sea.llm.models import ModelSet
from sea.llm.patterns import PATTERNS
from tests.e2e.conftest import LOCAL_MODEL, PERSONA

pytestmark = LOCAL_MODEL


def test_smollm2_analyzes_an_intent_within_the_seed_schema(tmp_path: Path) -> None:
    from sea.chat.providers import resolve_model

    model = resolve_model("local")
    store = SQLiteStore(tmp_path / "memory.sqlite")
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(model),
                                    library=PlaybookLibrary.bundled(),
                                    checkpoint_path=tmp_path / "checkpoints.sqlite"))
    try:
        result = runtime.run_pulse(PERSONA, "sub_intent",
                                   "Please summarize what we talked about yesterday.")
    finally:
        runtime.close()
    assert result.status == "ok", result.error
    (call,) = result.llm_calls
    assert call.model == "smollm2-135m-instruct" and call.outcome == "ok"
    assert call.pattern == "base_main" and call.warnings == []  # constrained: no extraction
    answer = call.response
    assert answer["action_type"] in ACTION_TYPES and answer["complexity"] in COMPLEXITIES
    assert 0 <= answer["confidence"] <= 1 and isinstance(answer["reasoning"], str)
    out = result.outputs
    assert out["prompt_pattern"] in PATTERNS
    assert out["prompt_pattern"] == select_prompt_pattern(
        answer["action_type"], answer["complexity"], answer["confidence"])
    assert out["clarify"] is (answer["confidence"] < 0.5)
    assert out["confidence"] == answer["confidence"]
    assert isinstance(out["require_approval"], bool)
    store.close()
