"""The engine's own tools: LangChain tools a pulse calls without LangChain's run machinery.

A tool the engine makes (the built-in memory tools, the workspace's, the plan tools, the
model tools) is a :class:`EngineTool`. To a model and to a host it is an ordinary
``StructuredTool``: the same name, description, argument schema, ``invoke`` and ``ainvoke``.
When a pulse calls one, :class:`~sea.engine.tools.box.ToolBox` calls it directly instead of
through ``BaseTool.ainvoke``, whose callback managers, signature inspection and type-hint
evaluation cost more than most of these tools' own work (a quarter of a millisecond a
call). What the tool receives is what ``ainvoke`` would give it: the arguments parsed by
its argument model (so coerced values and nested models are the same), the model's defaults
for the others, and the call's config when it takes one (a test holds the two paths equal
on the installed LangChain). What is left out is LangChain's callbacks
(a LangSmith trace does not show these calls); the pulse's own events and call records do.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from sea.engine.tools.threads import in_daemon_thread

CONFIG_PARAMETER = "config"
"""The parameter an engine tool's function takes the call's config by."""

REPLAYABLE = "sea_replayable"
"""The key of a tool's ``metadata`` that, true, says a call of it may be made again
harmlessly: it reads and changes nothing outside its result (a recoverable pulse may then
run a callee that calls it in its caller's step, :attr:`sea.engine.compiler.Compiled.one_step`).
A host marks its own tools so the same way."""


def replayable(tool: Any) -> bool:
    """Whether ``tool``'s metadata says it may be called again harmlessly
    (:data:`REPLAYABLE`)."""
    return bool((getattr(tool, "metadata", None) or {}).get(REPLAYABLE))


class EngineTool(StructuredTool):
    """A ``StructuredTool`` of the engine's own, made by :func:`engine_tool`."""

    takes_config: bool = False
    """Whether the function has a ``config`` parameter (it then gets the call's config)."""

    async def call_direct(self, args: Mapping[str, Any], config: RunnableConfig) -> Any:
        """Run the tool with checked ``args`` as ``ainvoke(args, config)`` would, without
        LangChain's callbacks: in a daemon thread for a synchronous function
        (:func:`~sea.engine.tools.threads.in_daemon_thread`)."""
        schema = self.args_schema
        assert isinstance(schema, type) and issubclass(schema, BaseModel)
        parsed = schema.model_validate(dict(args))
        # every field: those passed, parsed, and the others' defaults, as ``ainvoke`` gives
        kwargs = {name: getattr(parsed, name) for name in schema.model_fields}
        if self.takes_config:
            kwargs[CONFIG_PARAMETER] = config
        if self.coroutine is not None:
            return await self.coroutine(**kwargs)
        assert self.func is not None
        return await in_daemon_thread(self.name, self.func, **kwargs)


def engine_tool(
    *,
    name: str,
    description: str,
    args_schema: type[BaseModel],
    func: Callable[..., Any] | None = None,
    coroutine: Callable[..., Awaitable[Any]] | None = None,
    reads_only: bool = False,
) -> EngineTool:
    """An engine tool of a synchronous ``func`` and/or a ``coroutine`` (preferred when a
    pulse calls it); either may take the call's config as a ``config`` parameter. One that
    ``reads_only`` (changes nothing: a call may be made again) is marked
    :data:`REPLAYABLE`."""
    target = coroutine if coroutine is not None else func
    assert target is not None
    made = EngineTool.from_function(
        func=func, coroutine=coroutine, name=name, description=description,
        args_schema=args_schema, takes_config=_takes_config(target),
        metadata={REPLAYABLE: True} if reads_only else None,
    )
    assert isinstance(made, EngineTool)
    return made


def _takes_config(target: Callable[..., Any]) -> bool:
    """Whether ``target`` has a ``config`` parameter (read from its code when it is a plain
    function: tools are made for every pulse, and ``inspect.signature`` costs more)."""
    code = getattr(target, "__code__", None)
    if code is None:
        return CONFIG_PARAMETER in inspect.signature(target).parameters
    named = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return CONFIG_PARAMETER in named
