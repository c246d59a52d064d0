"""Structured output, negotiated per model; then jsonschema validation and bounded retries
that tell the model what was wrong.

Methods, best first (:data:`METHODS`): ``json_schema`` (the provider enforces the schema),
``json_mode`` (the provider guarantees JSON; the schema goes in the prompt),
``function_calling`` (the answer is a tool call) and ``prompt`` (the schema goes in the prompt
and the first JSON value of the text is taken). A model is asked with the best method it
accepts; a method it refuses, when building the request or at its first request, is skipped
and the next one tried. The method that worked is remembered for that model
(:class:`MethodMemory`) for the rest of the process; a host can force one.

The handshake with chat models: ``model.with_structured_output(schema, include_raw=True,
method=...)`` returns ``{"raw": AIMessage, "parsed": dict | None, "parsing_error": ...}``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, get_args

import orjson
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel

from sea.errors import SeaError, SizeLimitExceeded
from sea.jsontypes import json_size, json_text
from sea.lang.jsonschemas import schema_problems, validator
from sea.lang.trust import neutralize
from sea.llm.resilience import is_rate_limit

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_MAX_PROBLEMS = 3
ANSWER_TITLE = "structured_answer"
ANSWER_DESCRIPTION = "The answer, as a JSON object of this schema."


StructuredMethod = Literal["json_schema", "json_mode", "function_calling", "prompt"]
METHODS: tuple[StructuredMethod, ...] = get_args(StructuredMethod)
"""The structured-output methods, best first."""


class MethodMemory:
    """Which structured-output method each model uses: forced, or the one that worked."""

    def __init__(self, forced: StructuredMethod | None = None) -> None:
        if forced is not None and forced not in METHODS:
            raise ValueError(f"unknown structured method {forced!r} (known: {', '.join(METHODS)})")
        self.forced = forced
        self._worked: dict[int, StructuredMethod] = {}

    def candidates(self, model: BaseChatModel) -> tuple[StructuredMethod, ...]:
        """The methods to try for ``model``, in order."""
        if self.forced is not None:
            return (self.forced,)
        known = self._worked.get(id(model))
        return (known,) if known is not None else METHODS

    def worked(self, model: BaseChatModel, method: StructuredMethod) -> None:
        """Remember that ``method`` worked for ``model``."""
        self._worked[id(model)] = method

    def method_of(self, model: BaseChatModel) -> StructuredMethod | None:
        """The method remembered (or forced) for ``model``."""
        return self.forced or self._worked.get(id(model))


@dataclass(slots=True)
class Usage:
    """Tokens counted by the provider, summed over attempts."""

    tokens_in: int = 0
    tokens_out: int = 0

    def add(self, message: BaseMessage | None) -> None:
        """Add a model answer's ``usage_metadata`` (absent usage counts as zero)."""
        usage = message.usage_metadata if isinstance(message, AIMessage) else None
        if usage:
            self.tokens_in += int(usage.get("input_tokens", 0))
            self.tokens_out += int(usage.get("output_tokens", 0))


@dataclass(frozen=True, slots=True)
class Attempt:
    """One answer of the model to a structured request.

    Attributes:
        answer: What the model answered, in the scripted model's response form: the parsed
            object when there was one, else the raw text.
        text: The answer as text (what the model is shown when it is asked again).
        problem: Why the answer was rejected; None when it was accepted.
        parsed: The answer held a JSON value (``answer`` is that value).
    """

    answer: Any
    text: str
    problem: str | None
    parsed: bool = True


@dataclass(slots=True)
class StructuredOutcome:
    """The result of a structured request: the accepted value, or the last problem."""

    value: Any = None
    accepted: bool = False
    text: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    messages: list[BaseMessage] = field(default_factory=list)
    """The messages of the last request (with every retry instruction)."""
    usage: Usage = field(default_factory=Usage)
    method: StructuredMethod | None = None
    """The method the answer was asked with."""
    refused: list[str] = field(default_factory=list)
    """Methods whose first request failed before one worked (``method: reason``)."""

    @property
    def native(self) -> bool:
        """The provider produced the structure itself (not extracted from text)."""
        return self.method in ("json_schema", "function_calling")

    @property
    def problem(self) -> str | None:
        """Why the last answer was rejected, if it was."""
        return self.attempts[-1].problem if self.attempts else None


def with_playbook_enum(schema: Mapping[str, Any], names: Sequence[str] | None) -> dict[str, Any]:
    """A deep copy of ``schema`` whose ``playbook`` property may only be one of ``names``.

    The schema is returned unchanged (copied) when ``names`` is empty or there is no
    ``playbook`` property.
    """
    try:  # a schema is JSON: its JSON round trip is a deep copy, several times as fast
        result: dict[str, Any] = orjson.loads(orjson.dumps(schema))
    except TypeError:  # an integer beyond 64 bits, or a value that is not JSON
        result = copy.deepcopy(dict(schema))
    properties = result.get("properties")
    if names and isinstance(properties, dict) and isinstance(properties.get("playbook"), dict):
        properties["playbook"]["enum"] = list(names)
    return result


def check_schema(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a usable JSON Schema (2020-12), or None when it is: the
    metaschema's verdict, then a pattern the linear-time regex engine cannot run or a
    ``$ref`` that does not resolve (:func:`sea.lang.jsonschemas.schema_problems`).

    The verdict is a function of the schema's content, and checking costs more than a
    scripted model's whole answer: it is kept per content (its canonical JSON), so a
    response schema is checked once per process, not once per call."""
    return _checked(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS, default=str))


@lru_cache(maxsize=512)
def _checked(canonical: bytes) -> str | None:
    schema = orjson.loads(canonical)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        return f"{exc.message} (at /{where})" if where else exc.message
    for problem in schema_problems(schema)[:1]:
        where = "/".join(str(p) for p in problem.path)
        return f"{problem.message} (at /{where})"
    return None


def validation_problem(schema: Mapping[str, Any], value: Any) -> str | None:
    """What is wrong with ``value`` for ``schema``, in words for the model; None when valid."""
    errors = sorted(validator(schema).iter_errors(value), key=lambda e: (list(e.path), e.message))
    if not errors:
        return None
    parts = []
    for error in errors[:_MAX_PROBLEMS]:
        where = "/".join(str(p) for p in error.absolute_path)
        parts.append(f"at /{where}: {error.message}" if where else error.message)
    more = len(errors) - _MAX_PROBLEMS
    if more > 0:
        parts.append(f"and {more} more problem{'s' if more > 1 else ''}")
    return "; ".join(parts)


def extract_json(text: str, *, want_array: bool = False) -> Any | None:
    """The first JSON object (or array, with ``want_array``) in a model's text.

    The whole text is tried first, then fenced code blocks, then every opening brace in
    order. Returns None when nothing decodes.
    """
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    opener = "[" if want_array else "{"
    decoder = json.JSONDecoder()
    start = text.find(opener)
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find(opener, start + 1)
            continue
        return value
    return None


def schema_instruction(schema: Mapping[str, Any]) -> HumanMessage:
    """The instruction sent to a model without native structured output (the schema's
    text may come from a tool's source, an MCP server's descriptions, so its tags are
    neutralized; JSON has no ``<`` or ``>`` of its own, so it stays the same JSON)."""
    return HumanMessage(
        content="<system>Answer with only a JSON value that matches this JSON Schema, "
        f"with no other text:\n{neutralize(json_text(schema))}</system>"
    )


def retry_instruction(problem: str, schema: Mapping[str, Any]) -> HumanMessage:
    """The message that tells the model what was wrong with its answer."""
    said = neutralize(problem)  # it may quote the answer, which is the model's text
    return HumanMessage(
        content=f"<system>Your previous answer could not be used: {said}. Answer again "
        "with only a JSON value that matches this JSON Schema:\n"
        f"{neutralize(json_text(schema))}</system>"
    )


def native_runnable(
    model: BaseChatModel, schema: Mapping[str, Any], method: StructuredMethod = "json_schema"
) -> Runnable[Any, Any] | None:
    """``model.with_structured_output(schema, include_raw=True, method=method)``, or None when
    the model does not offer that method (``prompt`` never needs one).

    Providers that implement structured output as a tool call need a ``title`` (the tool's
    name); a schema without one is given ``structured_answer``.
    """
    if method == "prompt":
        return None
    titled = {"title": ANSWER_TITLE, "description": ANSWER_DESCRIPTION, **schema}
    if method == "json_mode" and model._llm_type == "openai-chat":
        # OpenAI-protocol servers of the llama.cpp family constrain JSON mode to a schema
        # given beside the type; a server that refuses the field refuses the method.
        return model.bind(response_format={"type": "json_object", "schema": dict(schema)})
    try:
        return model.with_structured_output(titled, include_raw=True, method=method)
    except (NotImplementedError, TypeError, ValueError):
        if method != "function_calling":
            return None
    try:  # the generic implementation takes no `method` and calls a tool
        return model.with_structured_output(titled, include_raw=True)
    except NotImplementedError:
        return None


async def run_structured(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    schema: Mapping[str, Any],
    *,
    config: RunnableConfig,
    max_retries: int,
    outcome: StructuredOutcome | None = None,
    memory: MethodMemory | None = None,
    check: Callable[[Any], str | None] | None = None,
    max_answer_chars: int | None = None,
) -> StructuredOutcome:
    """Ask ``model`` for a value of ``schema``, retrying up to ``max_retries`` times.

    ``check`` judges a parsed answer beyond the schema (what else is wrong, in words for
    the model, or None); its problem replaces the schema's, being the more precise.
    An answer longer than ``max_answer_chars`` raises :class:`SizeLimitExceeded` before it
    is parsed or validated.

    Methods are tried in ``memory``'s order; a method the model refuses (it cannot build the
    request, or its first request fails) gives way to the next one. Provider exceptions
    after that propagate (the caller turns them into ``ModelError``); cancellation
    propagates untouched. Pass ``outcome`` to keep what was done so far when that happens.
    """
    memory = memory if memory is not None else MethodMemory()
    outcome = outcome if outcome is not None else StructuredOutcome()
    candidates = memory.candidates(model)
    for index, method in enumerate(candidates):
        runnable = native_runnable(model, schema, method)
        if runnable is None and method != "prompt":
            continue  # the model does not offer it: nothing was asked
        last = index == len(candidates) - 1
        try:
            await _ask(model, runnable, method, messages, schema, config, max_retries, outcome,
                       check, max_answer_chars)
        except _Refused as refused:
            if last:
                raise refused.error from None
            reason = (str(refused.error).strip().splitlines() or [""])[0][:300]
            outcome.refused.append(f"{method}: {type(refused.error).__name__}: {reason}")
            continue
        memory.worked(model, method)
        return outcome
    return outcome


class _Refused(Exception):
    """The first request of a method failed: the model may not accept that method."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


async def _ask(
    model: BaseChatModel,
    runnable: Runnable[Any, Any] | None,
    method: StructuredMethod,
    messages: Sequence[BaseMessage],
    schema: Mapping[str, Any],
    config: RunnableConfig,
    max_retries: int,
    outcome: StructuredOutcome,
    check: Callable[[Any], str | None] | None = None,
    limit: int | None = None,
) -> None:
    outcome.method = method
    in_prompt = method in ("json_mode", "prompt")
    sent = [*messages, schema_instruction(schema)] if in_prompt else list(messages)
    for attempt_index in range(max_retries + 1):
        if attempt_index:
            previous = outcome.attempts[-1]
            sent.append(AIMessage(content=previous.text))
            sent.append(retry_instruction(previous.problem or "", schema))
        outcome.messages = list(sent)
        try:
            if runnable is not None:
                attempt = await _native_attempt(runnable, sent, schema, config, outcome.usage,
                                                limit)
            else:
                attempt = await _extraction_attempt(model, sent, schema, config, outcome.usage,
                                                    limit)
        except Exception as exc:  # a SEA error (cancelled, script exhausted) is never a refusal
            # nor is a rate limit: the method is fine, the provider wants us to wait
            if attempt_index == 0 and not isinstance(exc, SeaError) and not is_rate_limit(exc):
                raise _Refused(exc) from exc
            raise
        if check is not None and attempt.parsed:
            problem = check(attempt.answer)
            if problem is not None:
                attempt = dataclasses.replace(attempt, problem=problem)
        outcome.attempts.append(attempt)
        outcome.text = attempt.text
        if attempt.problem is None:
            outcome.value = attempt.answer
            outcome.accepted = True
            return


async def _native_attempt(
    runnable: Runnable[Any, Any],
    messages: list[BaseMessage],
    schema: Mapping[str, Any],
    config: RunnableConfig,
    usage: Usage,
    limit: int | None = None,
) -> Attempt:
    result = await runnable.ainvoke(messages, config=config)
    if isinstance(result, BaseMessage):  # JSON mode bound directly: the answer is text
        usage.add(result)
        return _judged(_text_of(result), schema, limit=limit)
    if isinstance(result, Mapping) and "raw" in result:
        raw = result.get("raw")
        parsed, parsing_error = result.get("parsed"), result.get("parsing_error")
    else:  # a model that ignores include_raw and returns the parsed value
        raw, parsed, parsing_error = None, result, None
    usage.add(raw if isinstance(raw, BaseMessage) else None)
    raw_text = _text_of(raw) if isinstance(raw, BaseMessage) else ""
    if isinstance(parsed, BaseModel):
        parsed = parsed.model_dump(mode="json")
    if parsed is None:  # the answer came as text rather than as a tool call
        reason = f" ({parsing_error})" if parsing_error else ""
        return _judged(raw_text, schema, reason, limit=limit)
    if limit is not None:
        _bounded(max(len(raw_text), json_size(parsed, limit)), limit)
    return Attempt(parsed, raw_text or json_text(parsed), validation_problem(schema, parsed))


async def _extraction_attempt(
    model: BaseChatModel,
    messages: list[BaseMessage],
    schema: Mapping[str, Any],
    config: RunnableConfig,
    usage: Usage,
    limit: int | None = None,
) -> Attempt:
    raw = await model.ainvoke(messages, config=config)
    usage.add(raw)
    return _judged(_text_of(raw), schema, limit=limit)


def answer_too_large(limit: int) -> SizeLimitExceeded:
    """The error of a model answer longer than ``limit`` (``Limits.max_answer_chars``)."""
    return SizeLimitExceeded(
        f"the model's answer has more than {limit:,} characters (Limits.max_answer_chars); "
        "it was dropped",
        limit="max_answer_chars",
    )


def _bounded(size: int, limit: int | None) -> None:
    """Raise :func:`answer_too_large` if ``size`` passes ``limit`` (None: no limit)."""
    if limit is not None and size > limit:
        raise answer_too_large(limit)


def _judged(
    text: str, schema: Mapping[str, Any], reason: str = "", *, limit: int | None = None
) -> Attempt:
    """The attempt of an answer given as text: its first JSON value, validated (an answer
    longer than ``limit`` raises :class:`SizeLimitExceeded` first)."""
    _bounded(len(text), limit)
    parsed = extract_json(text, want_array=schema.get("type") == "array")
    if parsed is None:
        return Attempt(text, text, f"the answer contained no JSON value{reason}", parsed=False)
    return Attempt(parsed, text, validation_problem(schema, parsed))


def _text_of(message: BaseMessage) -> str:
    return str(message.text)


