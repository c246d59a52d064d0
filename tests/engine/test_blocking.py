"""The synchronous API runs every call of a runtime on one long-lived event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.llm.models import ModelSet
from tests.engine.conftest import PLAYBOOKS


class LoopBoundModel(ScriptedChatModel):
    """Like an HTTP client of a model provider: bound to the first loop it ran on."""

    _loop: asyncio.AbstractEventLoop | None = PrivateAttr(default=None)

    def _check_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError("Event loop is closed")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._check_loop()
        return await super()._agenerate(messages, stop, run_manager, **kwargs)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        self._check_loop()
        async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
            yield chunk


SCRIPT = {
    "responses": {
        "llm_memo.sum": ["a summary"] * 3,
        "llm_memo.pick": [{"choice": "b"}] * 3,
        "llm_memo.reply": ["a reply"] * 3,
    }
}


def _runtime(store: SQLiteStore, tmp_path: Path, model: ScriptedChatModel) -> Runtime:
    return Runtime(RuntimeConfig(
        store,
        ModelSet.single(model),
        library=[PLAYBOOKS],
        checkpoint_path=tmp_path / "checkpoints.sqlite",
    ))


def test_a_loop_bound_client_works_across_sync_calls(store: SQLiteStore, tmp_path: Path) -> None:
    model = LoopBoundModel.from_mapping(SCRIPT)
    persona = Persona("aiko", "Aiko", "")
    with _runtime(store, tmp_path, model) as runtime:
        statuses = [runtime.run_pulse(persona, "llm_memo", f"text {i}").status for i in range(2)]
        streamed = list(runtime.stream_pulse(persona, "llm_memo", "text 3"))
        assert runtime.loop_thread.running
    assert statuses == ["ok", "ok"]
    assert streamed[-1].status == "ok"  # type: ignore[attr-defined]
    assert not runtime.loop_thread.running  # closing the runtime stops its loop


def test_the_client_is_what_fails_on_a_fresh_loop_per_call() -> None:
    model = LoopBoundModel.from_mapping(SCRIPT)
    asyncio.run(model.ainvoke("hi", config={"metadata": {"sea_playbook": "llm_memo",
                                                         "sea_node": "sum"}}))
    with pytest.raises(RuntimeError, match="Event loop is closed"):
        asyncio.run(model.ainvoke("hi", config={"metadata": {"sea_playbook": "llm_memo",
                                                             "sea_node": "sum"}}))


def test_sync_calls_from_several_threads_run_side_by_side(
    store: SQLiteStore, tmp_path: Path
) -> None:
    model = LoopBoundModel.from_mapping(SCRIPT)
    results: list[str] = []
    with _runtime(store, tmp_path, model) as runtime:
        threads = [
            threading.Thread(
                target=lambda i=i: results.append(
                    runtime.run_pulse(Persona(f"p{i}", "P", ""), "llm_memo", "x").status
                )
            )
            for i in range(3)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert results == ["ok", "ok", "ok"]


def test_sync_call_inside_a_running_loop_is_a_usage_error(
    store: SQLiteStore, tmp_path: Path
) -> None:
    model = LoopBoundModel.from_mapping(SCRIPT)
    with _runtime(store, tmp_path, model) as runtime:

        async def inside() -> None:
            runtime.run_pulse(Persona("aiko", "Aiko", ""), "llm_memo", "x")

        with pytest.raises(UsageError, match="use arun_pulse"):
            asyncio.run(inside())
