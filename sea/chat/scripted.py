"""A scripted chat model: answers from a script keyed by ``playbook.node``.

Used by tests and by the CLI (``scripted:FILE``) to run pulses offline and reproducibly.
Each call reads ``sea_playbook`` and ``sea_node`` from the run's config metadata (the LLM call
path always sets them), takes the next unused response for ``"<playbook>.<node>"`` and, when
that list is used up (or absent), the next one of the ``default`` list. A response is:

* a string: the answer text;
* ``{"tool_calls": [{"name": ..., "args": {...}}], "content": "..."}``: a tool call (with
  optional text);
* any other JSON value: a structured answer (what ``with_structured_output`` parses).

Running out of responses raises :class:`sea.errors.ScriptExhausted` naming the node.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda, ensure_config
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

from sea.chat.scripted_answers import (
    answer,
    aparse_structured,
    chunks,
    parse_structured,
    parsed_or_raise,
)
from sea.errors import UsageError
from sea.jsonfile import CONFIG_FILES, ReadLimit, read_json
from sea.llm.errors import ScriptExhausted
from sea.llm.messages import message_dicts

_STRUCTURED_FLAG = "sea_structured_output"
_METADATA_KWARG = "sea_node_metadata"


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One call the scripted model answered (for tests that inspect what a node sent).

    Attributes:
        key: ``"<playbook>.<node>"`` from the call's metadata (None when absent).
        messages: The messages sent, as ``{"role", "content"}`` dicts.
        response: The script entry that answered.
    """

    key: str | None
    messages: list[dict[str, str]]
    response: Any


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script keyed by ``playbook.node``.

    Supports ``invoke``/``ainvoke``, token streaming (a chunk per word), ``bind_tools``
    and ``with_structured_output(schema, include_raw=True)``. Answers carry
    ``usage_metadata`` with token counts estimated from the text (about four characters
    per token).
    """

    responses: dict[str, list[Any]] = Field(default_factory=dict)
    """Responses per ``"<playbook>.<node>"``, consumed in order."""
    default: list[Any] = Field(default_factory=list)
    """Responses used, in order, when a node's own list is used up or absent."""
    model_name: str = "scripted"
    chunk_delay_s: float = Field(default=0.0, ge=0.0)
    """Seconds between streamed chunks (a slow stream, for demos and tests of cancellation)."""

    _cursors: dict[str, int] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _calls: list[ScriptedCall] = PrivateAttr(default_factory=list)

    def model_post_init(self, context: Any, /) -> None:
        """Check every script entry once, so a bad script fails before any call."""
        _check_script(self.responses, self.default)

    @classmethod
    def from_file(cls, path: Path | str, *, limit: ReadLimit = CONFIG_FILES) -> ScriptedChatModel:
        """Load a script: ``{"responses": {"pb.node": [...]}, "default": [...]}`` (and
        optionally ``"chunk_delay_s"``).

        Raises:
            UsageError: the file cannot be read (not a regular file, larger than ``limit``)
                or does not have that shape.
        """
        file = Path(path)
        return cls.from_mapping(read_json(file, "model script", limit=limit), source=str(file))

    @classmethod
    def from_mapping(cls, data: Any, *, source: str = "<script>") -> ScriptedChatModel:
        """Build from the script's JSON form (see :meth:`from_file`)."""
        if not isinstance(data, dict) or not set(data) <= {"responses", "default", "chunk_delay_s"}:
            raise UsageError(
                f"{source}: a model script is an object with `responses` "
                '({"playbook.node": [...]}), `default` ([...]) and optionally '
                "`chunk_delay_s` (seconds between streamed chunks)"
            )
        delay = data.get("chunk_delay_s", 0.0)
        if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
            raise UsageError(f"{source}: `chunk_delay_s` must be a number of seconds, 0 or more")
        responses, default = data.get("responses", {}), data.get("default", [])
        if not isinstance(responses, dict) or not all(
            isinstance(v, list) for v in responses.values()
        ):
            raise UsageError(f'{source}: `responses` must map "playbook.node" to a list')
        if not isinstance(default, list):
            raise UsageError(f"{source}: `default` must be a list")
        _check_script(responses, default, source=f"{source}: ")
        return cls(responses=responses, default=default, chunk_delay_s=float(delay))

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[ScriptedCall]:
        """Every call answered so far, in order."""
        with self._lock:
            return list(self._calls)

    def remaining(self, key: str | None = None) -> int:
        """How many responses are left for ``key`` (or in the default list when None)."""
        with self._lock:
            if key is None:
                return len(self.default) - self._cursors.get("", 0)
            return len(self.responses.get(key, [])) - self._cursors.get(key, 0)

    # -- BaseChatModel --------------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._result(messages, _metadata(run_manager), kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._result(messages, _metadata(run_manager), kwargs)

    # langchain-core streams without handing the run's metadata to ``_stream``/``_astream``,
    # so ``stream``/``astream`` pass it along as a keyword, and only they stream.

    def stream(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> Iterator[AIMessageChunk]:
        """Stream the answer one word per chunk (usage and tool calls on the last chunk)."""
        kwargs[_METADATA_KWARG] = _node_metadata(config)
        yield from super().stream(input, config, stop=stop, **kwargs)

    async def astream(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[AIMessageChunk]:
        """Stream the answer one word per chunk (usage and tool calls on the last chunk)."""
        kwargs[_METADATA_KWARG] = _node_metadata(config)
        async for chunk in super().astream(input, config, stop=stop, **kwargs):
            yield chunk

    def _should_stream(
        self,
        *,
        async_api: bool,
        run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> bool:
        if _METADATA_KWARG not in kwargs:
            return False  # an implicit stream would lose the node's metadata: generate instead
        return super()._should_stream(async_api=async_api, run_manager=run_manager, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        entry = self._take(messages, kwargs.pop(_METADATA_KWARG, None) or _metadata(run_manager))
        yield from chunks(answer(entry, messages, kwargs))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        entry = self._take(messages, kwargs.pop(_METADATA_KWARG, None) or _metadata(run_manager))
        for chunk in chunks(answer(entry, messages, kwargs)):
            yield chunk
            await asyncio.sleep(self.chunk_delay_s)  # a real stream yields between chunks

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Any | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Offer tools to the model: a scripted tool call is only valid when tools are bound."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | Any]:
        """Structured answers: the script's object entries, parsed back from the answer's JSON.

        With ``include_raw`` the result is ``{"raw", "parsed", "parsing_error"}``; without it,
        the parsed value (a text entry that is not JSON raises ``OutputParserException``).
        """
        bound = self.bind(**{_STRUCTURED_FLAG: True})
        parse = RunnableLambda(
            parse_structured, afunc=aparse_structured, name="scripted_structured"
        )
        if include_raw:
            return bound | parse
        return bound | parse | RunnableLambda(parsed_or_raise, name="scripted_parsed")

    # -- script ---------------------------------------------------------------------------

    def _result(
        self, messages: list[BaseMessage], metadata: Mapping[str, Any], kwargs: Mapping[str, Any]
    ) -> ChatResult:
        message = answer(self._take(messages, metadata), messages, kwargs)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _take(self, messages: list[BaseMessage], metadata: Mapping[str, Any]) -> Any:
        playbook, node = metadata.get("sea_playbook"), metadata.get("sea_node")
        key = f"{playbook}.{node}" if playbook and node else None
        with self._lock:
            entry = self._next_entry(key)
            if entry is _NOTHING:
                raise ScriptExhausted(
                    self._exhausted_message(key),
                    playbook=str(playbook) if playbook else None,
                    node=str(node) if node else None,
                )
            self._calls.append(ScriptedCall(key, message_dicts(messages), entry))
            if isinstance(entry, dict) and "tool_calls" in entry:  # ids unique per model
                calls = [
                    {"id": f"call_{len(self._calls)}_{i}", **c}
                    for i, c in enumerate(entry["tool_calls"])
                ]
                entry = {**entry, "tool_calls": calls}
        return entry

    def _next_entry(self, key: str | None) -> Any:
        for cursor_key, entries in ((key, self.responses.get(key or "")), ("", self.default)):
            if cursor_key is None or entries is None:
                continue
            position = self._cursors.get(cursor_key, 0)
            if position < len(entries):
                self._cursors[cursor_key] = position + 1
                return entries[position]
        return _NOTHING

    def _exhausted_message(self, key: str | None) -> str:
        if key is None:
            return (
                f"the scripted model has no response left: the call named no node (no "
                f"sea_playbook/sea_node metadata) and all {len(self.default)} default "
                "responses are used"
            )
        own = len(self.responses.get(key, []))
        return (
            f"the scripted model has no response left for node {key!r}: its {own} own "
            f"response(s) and all {len(self.default)} default response(s) are used; add "
            f'responses under "{key}" or to "default"'
        )


_NOTHING = object()


def _check_script(
    responses: Mapping[str, list[Any]], default: list[Any], *, source: str = ""
) -> None:
    for key, entries in responses.items():
        for index, entry in enumerate(entries):
            _check_entry(entry, f"{source}responses[{key!r}][{index}]")
    for index, entry in enumerate(default):
        _check_entry(entry, f"{source}default[{index}]")


def _check_entry(entry: Any, where: str) -> None:
    if not isinstance(entry, dict) or "tool_calls" not in entry:
        return
    extra = set(entry) - {"tool_calls", "content"}
    calls = entry["tool_calls"]
    if extra or not isinstance(calls, list) or not calls:
        raise UsageError(
            f"script entry {where}: a tool-call response is "
            '{"tool_calls": [{"name": ..., "args": {...}}], "content": "..."}'
        )
    for call in calls:
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("name"), str)
            or not isinstance(call.get("args", {}), dict)
        ):
            raise UsageError(f"script entry {where}: a tool call needs `name` and an `args` object")
    if not isinstance(entry.get("content", ""), str):
        raise UsageError(f"script entry {where}: `content` of a tool-call response is a string")


def _node_metadata(config: RunnableConfig | None) -> dict[str, Any]:
    metadata = ensure_config(config).get("metadata") or {}
    return {key: metadata.get(key) for key in ("sea_playbook", "sea_node")}


def _metadata(run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None) -> Any:
    return (run_manager.metadata if run_manager is not None else None) or {}
