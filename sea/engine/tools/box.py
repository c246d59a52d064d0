"""The tools a runtime may call, by name, with argument checks before every call."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import (
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, ValidationError

from sea.engine.tools.arguments import ArgumentSchema, tool_schema
from sea.engine.tools.engine_tool import EngineTool
from sea.engine.tools.refs import ToolParameters
from sea.engine.tools.threads import Escaped, in_daemon_thread
from sea.errors import ToolFailed, ToolNotFound, ToolResultRefused, ToolTimedOut, UsageError
from sea.jsontypes import nul_pointer
from sea.lang.jsonschemas import SchemaValidator, validator


@dataclass(frozen=True, slots=True)
class Signature:
    """A tool's argument schema and its validator, worked out once per tool object, with
    what the argument checks and an action pipeline's refs read from the schema (kept as
    they read it, so that calls pay only for the values they pass)."""

    tool: BaseTool
    schema: dict[str, Any]
    check: SchemaValidator
    arguments: ArgumentSchema
    """The checks every call's arguments go through."""
    parameters: ToolParameters
    """How refs are fitted to the parameters, and the type guard."""

    def serves(self, tool: BaseTool) -> bool:
        """Whether this signature is also ``tool``'s: the same tool, or one of the same type,
        name, description and argument schema (a built-in tool made anew for each pulse's
        persona from the same argument model)."""
        mine = self.tool
        if mine is tool:
            return True
        if type(mine) is not type(tool) or (mine.name, mine.description) != (
            tool.name, tool.description
        ):
            return False
        ours, theirs = mine.args_schema, tool.args_schema
        return ours is theirs or (isinstance(ours, dict) and ours == theirs)

    def for_tool(self, tool: BaseTool) -> Signature:
        """This signature for ``tool`` (which it :meth:`serves`)."""
        return self if tool is self.tool else replace(self, tool=tool)

    @classmethod
    def of(cls, tool: BaseTool) -> Signature:
        """The signature of ``tool``."""
        schema = tool_schema(tool)
        check: SchemaValidator = validator(schema)
        model = tool.args_schema
        if isinstance(model, type) and issubclass(model, BaseModel):
            check = _ModelFirst(model, check)
        return cls(
            tool, schema, check, ArgumentSchema(tool.name, schema, check),
            ToolParameters(tool.name, schema),
        )


class _ModelFirst:
    """A validator that asks the tool's own pydantic model first (strict, compiled, and what
    the tool itself will check), and the JSON Schema validator only when the model refuses:
    for the verdict, and for the words of every error."""

    def __init__(self, model: type[BaseModel], schema: SchemaValidator) -> None:
        self._validate = model.__pydantic_validator__.validate_python  # model_validate's own
        self._schema = schema

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` passes."""
        try:
            self._validate(instance, strict=True)
        except ValidationError:
            return self._schema.is_valid(instance)
        return True

    def iter_errors(self, instance: Any) -> Iterator[Any]:
        """The JSON Schema validator's errors."""
        return iter(self._schema.iter_errors(instance))


def signatures(tools: Iterable[BaseTool]) -> dict[str, Signature]:
    """Name → signature of ``tools`` (what a runtime keeps for the tools it lives with)."""
    return {tool.name: Signature.of(tool) for tool in tools}


ToolMaker = Callable[[], BaseTool]
"""Makes one tool when it is first needed (a pulse's built-in tools are many, and most
pulses call one or two of them)."""


class ToolBox:
    """langchain-core tools by name.

    Args:
        tools: The tools; names must be unique.
        makers: Tools made on first use (looked up, offered, checked or called), by name;
            the names are among the box's from the start.
        known: Signatures worked out before (e.g. by the runtime, once for its life), used
            for the tools they serve (:meth:`Signature.serves`). A mutable mapping also
            receives the signatures this box works out, for the boxes after it.

    Raises:
        UsageError: two tools share a name.
    """

    def __init__(
        self,
        tools: Iterable[BaseTool] = (),
        *,
        known: Mapping[str, Signature] | None = None,
        makers: Mapping[str, ToolMaker] | None = None,
    ) -> None:
        self._tools: dict[str, BaseTool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise UsageError(f"two tools are named {tool.name!r}; tool names must be unique")
            self._tools[tool.name] = tool
        self._makers: dict[str, ToolMaker] = {}
        for name, make in (makers or {}).items():
            if name in self._tools:
                raise UsageError(f"two tools are named {name!r}; tool names must be unique")
            self._makers[name] = make
        self._known: Mapping[str, Signature] = known or {}
        self._signatures: dict[str, Signature] = {}
        for tool in self._tools.values():
            self._adopt(tool)
        self._learned = known if isinstance(known, MutableMapping) else None

    def _adopt(self, tool: BaseTool) -> None:
        """Take the known signature of ``tool``'s name when it serves ``tool``."""
        signature = self._known.get(tool.name)
        if signature is not None and signature.serves(tool):
            self._signatures[tool.name] = signature.for_tool(tool)

    def signature(
        self, name: str, *, playbook: str | None = None, node: str | None = None
    ) -> Signature:
        """The argument schema and validator of a tool (worked out on first use).

        Raises:
            ToolNotFound: no tool has that name (located at ``playbook``/``node``).
        """
        found = self._signatures.get(name)
        if found is None:
            tool = self.get(name, playbook=playbook, node=node)
            found = self._signatures.get(name)  # a made tool may have a known one
            if found is None:
                found = self._signatures[name] = Signature.of(tool)
                if self._learned is not None:
                    self._learned[name] = found
        return found

    def names(self) -> list[str]:
        """The tool names, sorted."""
        return sorted([*self._tools, *self._makers])

    def __contains__(self, name: object) -> bool:
        return name in self._tools or name in self._makers

    def get(self, name: str, *, playbook: str | None = None, node: str | None = None) -> BaseTool:
        """The tool called ``name``.

        Raises:
            ToolNotFound: no tool has that name (the message lists the known ones).
        """
        tool = self._tools.get(name)
        if tool is None:
            make = self._makers.pop(name, None)
            if make is None:
                known = ", ".join(self.names()) or "none"
                raise ToolNotFound(
                    f"unknown tool {name!r} (available tools: {known})", playbook=playbook,
                    node=node,
                )
            tool = self._tools[name] = make()
            if tool.name != name:
                raise UsageError(f"the maker of tool {name!r} made a tool named {tool.name!r}")
            self._adopt(tool)
        return tool

    def select(
        self, names: Sequence[str], *, playbook: str | None = None, node: str | None = None
    ) -> list[BaseTool]:
        """The tools called ``names``, in order (what an ``llm`` node offers its model).

        Raises:
            ToolNotFound: one of the names is unknown.
        """
        return [self.get(name, playbook=playbook, node=node) for name in names]

    def schema(self, name: str) -> dict[str, Any]:
        """The JSON Schema of a tool's arguments."""
        return self.signature(name).schema

    def check(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        playbook: str | None = None,
        node: str | None = None,
    ) -> dict[str, Any]:
        """The normalized arguments a call of ``name`` with ``args`` would get.

        Raises:
            ToolNotFound: no tool has that name.
            ToolArgumentError: an argument is unknown, missing or of the wrong type.
        """
        known = self.signature(name, playbook=playbook, node=node)
        return known.arguments.prepare(args, playbook=playbook, node=node)

    async def invoke(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        playbook: str | None = None,
        node: str | None = None,
        pulse_id: str | None = None,
        checked: bool = False,
        timeout_s: float | None = None,
    ) -> Any:
        """Check and normalize ``args`` (unless ``checked``: they are what :meth:`check`
        returned), then run the tool and return its result.

        The tool runs with ``config={"metadata": {"sea_playbook", "sea_node",
        "sea_pulse_id"}}`` (tools that take a ``config`` parameter can read it); a
        synchronous one in a daemon thread of its own (:mod:`sea.engine.tools.threads`).
        After ``timeout_s`` seconds the call is abandoned. Cancellation propagates
        untouched; anything else the tool raises (``SystemExit``, ``KeyboardInterrupt``,
        ``GeneratorExit``, any ``BaseException``) fails the call.

        Raises:
            ToolNotFound: no tool has that name.
            ToolArgumentError: an argument is unknown, missing or of the wrong type.
            ToolTimedOut: the tool did not answer within ``timeout_s``.
            ToolFailed: the tool raised (the original exception is the ``__cause__``).
            ToolResultRefused: the tool's result holds a NUL character (SEA538).
        """
        known = self.signature(name, playbook=playbook, node=node)
        prepared = dict(args) if checked else known.arguments.prepare(
            args, playbook=playbook, node=node)
        metadata = {"sea_playbook": playbook, "sea_node": node, "sea_pulse_id": pulse_id}
        deadline = asyncio.timeout(timeout_s)
        try:
            async with deadline:
                result = await _call(known.tool, prepared, {"metadata": metadata})
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the tool's own failure, whatever it raised
            if isinstance(exc, Escaped):
                exc = exc.inner
            if isinstance(exc, TimeoutError) and deadline.expired():
                raise ToolTimedOut(
                    f"tool {name!r} did not answer within {timeout_s:g} s (Limits."
                    "tool_timeout_s); it was abandoned (a slower tool needs a higher limit)",
                    playbook=playbook, node=node,
                ) from None
            raise ToolFailed(
                f"tool {name!r} failed: {type(exc).__name__}: {exc}", playbook=playbook, node=node
            ) from exc
        at = nul_pointer(result)
        if at is not None:  # refused here, where it enters the pulse, not at a later write
            raise ToolResultRefused(
                f"tool {name!r} returned a NUL character (at {at or 'its result'!r}), which the "
                "memory store cannot keep; the tool must return text without NUL (a binary "
                "file, say, is not text)", playbook=playbook, node=node)
        return result


async def _call(tool: BaseTool, args: dict[str, Any], config: Any) -> Any:
    """One call of ``tool``: the engine's own without LangChain's run, a synchronous one in
    a daemon thread, an asynchronous one awaited."""
    if isinstance(tool, EngineTool):
        return await tool.call_direct(args, config)
    if _synchronous(tool):
        return await in_daemon_thread(tool.name, tool.invoke, args, config=config)
    return await _contained(tool).ainvoke(args, config=config)


def _contained(tool: BaseTool) -> BaseTool:
    """A copy of ``tool`` whose asynchronous work raises :class:`Escaped` for what is not
    an ``Exception``: LangChain runs that work in a task of its own, and a ``SystemExit``
    or ``KeyboardInterrupt`` leaving a task stops the whole event loop."""
    if isinstance(tool, StructuredTool) and tool.coroutine is not None:
        return tool.model_copy(update={"coroutine": _containing(tool.coroutine)})
    copy = tool.model_copy()
    object.__setattr__(copy, "_arun", _containing(tool._arun))  # this copy's only
    return copy


def _containing(work: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(work)  # LangChain reads the signature (a config parameter, callbacks)
    async def contained(*args: Any, **kwargs: Any) -> Any:
        try:
            return await work(*args, **kwargs)
        except (Exception, asyncio.CancelledError):
            raise
        except BaseException as exc:
            raise Escaped(exc) from exc

    return contained


def _synchronous(tool: BaseTool) -> bool:
    """Whether ``tool`` has no asynchronous implementation (its ``ainvoke`` would run it in
    the event loop's default executor)."""
    if isinstance(tool, StructuredTool):
        return tool.coroutine is None
    return type(tool)._arun is BaseTool._arun
