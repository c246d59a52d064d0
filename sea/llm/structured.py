"""Structured output: native where the model supports it, else JSON extraction; then
jsonschema validation and bounded retries that tell the model what was wrong.

The handshake with chat models: ``model.with_structured_output(schema, include_raw=True)``
returns ``{"raw": AIMessage, "parsed": dict | None, "parsing_error": Exception | None}``. A
model that raises ``NotImplementedError`` there is asked in plain text (the schema is sent as
an instruction) and the first JSON value of its answer is taken.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel

from sea.jsontypes import json_text

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_MAX_PROBLEMS = 3
ANSWER_TITLE = "structured_answer"
ANSWER_DESCRIPTION = "The answer, as a JSON object of this schema."


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
    """

    answer: Any
    text: str
    problem: str | None


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
    native: bool = True

    @property
    def problem(self) -> str | None:
        """Why the last answer was rejected, if it was."""
        return self.attempts[-1].problem if self.attempts else None


def with_playbook_enum(schema: Mapping[str, Any], names: Sequence[str] | None) -> dict[str, Any]:
    """A deep copy of ``schema`` whose ``playbook`` property may only be one of ``names``.

    The schema is returned unchanged (copied) when ``names`` is empty or there is no
    ``playbook`` property.
    """
    result = copy.deepcopy(dict(schema))
    properties = result.get("properties")
    if names and isinstance(properties, dict) and isinstance(properties.get("playbook"), dict):
        properties["playbook"]["enum"] = list(names)
    return result


def check_schema(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a usable JSON Schema (2020-12), or None when it is."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        return f"{exc.message} (at /{where})" if where else exc.message
    return None


def validation_problem(schema: Mapping[str, Any], value: Any) -> str | None:
    """What is wrong with ``value`` for ``schema``, in words for the model; None when valid."""
    validator = Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: (list(e.path), e.message))
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
    """The instruction sent to a model without native structured output."""
    return HumanMessage(
        content="<system>Answer with only a JSON value that matches this JSON Schema, "
        f"with no other text:\n{json_text(schema)}</system>"
    )


def retry_instruction(problem: str, schema: Mapping[str, Any]) -> HumanMessage:
    """The message that tells the model what was wrong with its answer."""
    return HumanMessage(
        content=f"<system>Your previous answer could not be used: {problem}. Answer again "
        f"with only a JSON value that matches this JSON Schema:\n{json_text(schema)}</system>"
    )


def native_runnable(model: BaseChatModel, schema: Mapping[str, Any]) -> Runnable[Any, Any] | None:
    """``model.with_structured_output(schema, include_raw=True)``, or None when unsupported.

    Providers that implement structured output as a tool call need a ``title`` (the tool's
    name); a schema without one is given ``structured_answer``.
    """
    titled = {"title": ANSWER_TITLE, "description": ANSWER_DESCRIPTION, **schema}
    try:
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
) -> StructuredOutcome:
    """Ask ``model`` for a value of ``schema``, retrying up to ``max_retries`` times.

    Provider exceptions propagate (the caller turns them into ``ModelError``); cancellation
    propagates untouched. Pass ``outcome`` to keep what was done so far when that happens.
    """
    runnable = native_runnable(model, schema)
    outcome = outcome if outcome is not None else StructuredOutcome()
    outcome.native = runnable is not None
    sent = list(messages) if runnable is not None else [*messages, schema_instruction(schema)]
    for attempt_index in range(max_retries + 1):
        if attempt_index:
            previous = outcome.attempts[-1]
            sent.append(AIMessage(content=previous.text))
            sent.append(retry_instruction(previous.problem or "", schema))
        outcome.messages = list(sent)
        if runnable is not None:
            attempt = await _native_attempt(runnable, sent, schema, config, outcome.usage)
        else:
            attempt = await _extraction_attempt(model, sent, schema, config, outcome.usage)
        outcome.attempts.append(attempt)
        outcome.text = attempt.text
        if attempt.problem is None:
            outcome.value = attempt.answer
            outcome.accepted = True
            break
    return outcome


async def _native_attempt(
    runnable: Runnable[Any, Any],
    messages: list[BaseMessage],
    schema: Mapping[str, Any],
    config: RunnableConfig,
    usage: Usage,
) -> Attempt:
    result = await runnable.ainvoke(messages, config=config)
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
        return _judged(raw_text, schema, reason)
    return Attempt(parsed, raw_text or json_text(parsed), validation_problem(schema, parsed))


async def _extraction_attempt(
    model: BaseChatModel,
    messages: list[BaseMessage],
    schema: Mapping[str, Any],
    config: RunnableConfig,
    usage: Usage,
) -> Attempt:
    raw = await model.ainvoke(messages, config=config)
    usage.add(raw)
    return _judged(_text_of(raw), schema)


def _judged(text: str, schema: Mapping[str, Any], reason: str = "") -> Attempt:
    """The attempt of an answer given as text: its first JSON value, validated."""
    parsed = extract_json(text, want_array=schema.get("type") == "array")
    if parsed is None:
        return Attempt(text, text, f"the answer contained no JSON value{reason}")
    return Attempt(parsed, text, validation_problem(schema, parsed))


def _text_of(message: BaseMessage) -> str:
    return str(message.text)


