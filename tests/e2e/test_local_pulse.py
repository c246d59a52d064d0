"""One real pulse of the bundled persona on the bundled local model (needs the `local` extra)."""

from __future__ import annotations

from pathlib import Path

from saimemory.sqlite import SQLiteStore
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.e2e.conftest import LOCAL_MODEL, PERSONA

pytestmark = LOCAL_MODEL


def test_meta_user_pulse_on_the_local_model_speaks_and_remembers(tmp_path: Path) -> None:
    from sea.chat.providers import resolve_model

    model = resolve_model("local")
    store = SQLiteStore(tmp_path / "memory.sqlite")
    runtime = Runtime(RuntimeConfig(
        store,
        ModelSet(normal=model, lightweight=model),
        library=PlaybookLibrary.bundled(),
        checkpoint_path=tmp_path / "checkpoints.sqlite",
    ))
    try:
        first = runtime.run_pulse(PERSONA, "meta_user", "Hi! My name is Ken.")
        assert first.status == "ok", first.error
        assert len(first.spoken) == 1 and first.spoken[0].strip()
        assert {c.model for c in first.llm_calls} == {"smollm2-135m-instruct"}
        assert all(c.tokens_out > 0 for c in first.llm_calls)

        second = runtime.run_pulse(PERSONA, "meta_user", "What is my name?")
        assert second.status == "ok", second.error
        speaker = [c for c in second.llm_calls if c.playbook == "sub_speak"][0]
        sent = "\n".join(m["content"] for m in speaker.messages)
        assert "Hi! My name is Ken." in sent and first.spoken[0] in sent
    finally:
        runtime.close()
        store.close()
