"""The engine's own tools: called by the tool box without LangChain's run machinery, they
receive exactly what ``ainvoke`` would give them (parsed by their argument model, the
model's defaults for the others, the config when they take one), and run where ``ainvoke``
would run them (a coroutine on the loop, a function in a worker thread)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from sea.engine.tools.box import ToolBox
from sea.engine.tools.engine_tool import EngineTool, engine_tool
from sea.errors import ToolFailed


class Span(BaseModel):
    start: int = Field(ge=0)
    end: int


class PathArgs(BaseModel):
    path: str


class Args(BaseModel):
    path: str
    count: int = 3
    span: Span | None = None
    ratio: float = 1.0


def received(seen: list[dict[str, Any]]) -> Any:
    def run(config: RunnableConfig, **kwargs: Any) -> dict[str, Any]:
        seen.append({"kwargs": kwargs, "metadata": dict(config.get("metadata") or {}),
                     "thread": threading.current_thread() is threading.main_thread()})
        return {"ok": kwargs["path"]}

    return run


CALLS: list[dict[str, Any]] = [
    {"path": "a.txt"},
    {"path": "a.txt", "count": 5.0, "ratio": 2},
    {"path": "b.txt", "span": {"start": 1, "end": 4}},
]


def as_langchain_gives_them(args: dict[str, Any]) -> dict[str, Any]:
    """What ``ainvoke`` hands the same function (the reference the direct call must equal)."""
    seen: list[dict[str, Any]] = []
    reference = engine_tool(func=received(seen), name="probe", description="Probe.",
                            args_schema=Args)
    asyncio.run(reference.ainvoke(args, config={"metadata": {"sea_node": "n"}}))
    return seen[0]


@pytest.mark.parametrize("args", CALLS)
def test_a_direct_call_receives_what_ainvoke_gives(args: dict[str, Any]) -> None:
    seen: list[dict[str, Any]] = []
    tool = engine_tool(func=received(seen), name="probe", description="Probe.", args_schema=Args)
    assert isinstance(tool, EngineTool) and tool.takes_config
    result = asyncio.run(ToolBox([tool]).invoke("probe", args, playbook="pb", node="n",
                                                pulse_id="p1"))
    assert result == {"ok": args["path"]}
    reference = as_langchain_gives_them(args)
    got = seen[0]
    assert got["kwargs"] == reference["kwargs"]
    assert {k: type(v) for k, v in got["kwargs"].items()} == {
        k: type(v) for k, v in reference["kwargs"].items()}
    assert got["metadata"] == {"sea_playbook": "pb", "sea_node": "n", "sea_pulse_id": "p1"}
    assert got["thread"] is False  # a synchronous function runs in a worker thread


def test_a_coroutine_is_preferred_and_runs_on_the_loop() -> None:
    where: list[str] = []

    def run(path: str) -> str:
        where.append("func")
        return path

    async def arun(path: str) -> str:
        where.append("coroutine" if threading.current_thread() is threading.main_thread()
                     else "elsewhere")
        return path.upper()

    tool = engine_tool(func=run, coroutine=arun, name="both", description="Both.",
                       args_schema=PathArgs)
    assert not tool.takes_config
    assert asyncio.run(ToolBox([tool]).invoke("both", {"path": "x"})) == "X"
    assert where == ["coroutine"]


class Recorder(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.started: list[str] = []

    async def on_tool_start(self, serialized: dict[str, Any], input_str: str, *,
                            run_id: UUID, **kwargs: Any) -> None:
        self.started.append(serialized.get("name", "?"))


def test_an_engine_tool_still_works_as_a_langchain_tool() -> None:
    """A host or a model framework that calls it itself gets LangChain's whole run."""
    tool = engine_tool(func=lambda path, count=3, span=None, ratio=1.0: f"{path}:{count}",
                       name="plain", description="Plain.", args_schema=Args)
    recorder = Recorder()
    assert asyncio.run(tool.ainvoke({"path": "p", "count": 2},
                                    config={"callbacks": [recorder]})) == "p:2"
    assert recorder.started == ["plain"]
    assert tool.invoke({"path": "q"}) == "q:3"


def test_a_failing_engine_tool_is_tool_failed_with_its_cause() -> None:
    def run(path: str) -> str:
        raise OSError(f"cannot read {path}")

    tool = engine_tool(func=run, name="fails", description="Fails.", args_schema=PathArgs)
    with pytest.raises(ToolFailed) as caught:
        asyncio.run(ToolBox([tool]).invoke("fails", {"path": "gone.txt"}))
    assert "tool 'fails' failed: OSError: cannot read gone.txt" in str(caught.value)
    assert isinstance(caught.value.__cause__, OSError)


def test_the_tool_box_calls_an_engine_tool_without_a_langchain_run() -> None:
    """LangChain's run collector sees the host's tool, not the engine's."""
    from langchain_core.tools import StructuredTool
    from langchain_core.tracers.context import collect_runs

    def run(path: str) -> str:
        return path

    mine = engine_tool(func=run, name="mine", description="Mine.", args_schema=PathArgs)
    host = StructuredTool.from_function(func=run, name="host", description="Host's.",
                                        args_schema=PathArgs)
    box = ToolBox([mine, host])

    async def both() -> list[str]:
        return [await box.invoke("mine", {"path": "a"}), await box.invoke("host", {"path": "b"})]

    with collect_runs() as runs:
        assert asyncio.run(both()) == ["a", "b"]
    assert [run.name for run in runs.traced_runs] == ["host"]


def test_whether_a_tool_takes_the_config_is_read_from_its_function() -> None:
    import functools

    def keyword(path: str, *, config: RunnableConfig) -> str:
        return path

    def positional(config: RunnableConfig, path: str) -> str:
        return path

    def without(path: str, configuration: str = "") -> str:
        return path

    def local_config(path: str) -> str:
        config = path  # a local variable of that name is not a parameter
        return config

    bound = functools.partial(keyword, "p")
    made = {name: engine_tool(func=f, name=name, description="T.", args_schema=PathArgs)
            for name, f in [("keyword", keyword), ("positional", positional),
                            ("without", without), ("local", local_config),
                            ("partial", bound)]}
    assert {name: tool.takes_config for name, tool in made.items()} == {
        "keyword": True, "positional": True, "without": False, "local": False,
        "partial": True}
