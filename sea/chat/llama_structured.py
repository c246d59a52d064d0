"""The structured-output runnable of the local model (see the structured output handshake).

``model.bind(response_format=...)`` makes llama constrain generation with a grammar built
from a tightened copy of the schema; the result is parsed and checked against the caller's
schema, giving ``{"raw": AIMessage, "parsed": value | None, "parsing_error": error | None}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, ValidationError

from sea.chat.constrain import parse_structured, tighten_schema
from sea.chat.errors import StructuredOutputParseError
from sea.errors import UsageError

Converter = Callable[[Any], Any]


def structured_runnable(
    model: BaseChatModel,
    schema: dict[str, Any] | type,
    *,
    include_raw: bool,
    max_tokens: int,
    max_string_length: int,
    max_items: int,
) -> Runnable[LanguageModelInput, Any]:
    """Bind a grammar-constrained response format to ``model`` and parse what it returns.

    Args:
        model: A chat model taking ``response_format`` and ``max_tokens`` call options.
        schema: A JSON Schema dict or a pydantic model class.
        include_raw: Produce the ``{"raw", "parsed", "parsing_error"}`` dict.
        max_tokens: Generation budget of the structured call.
        max_string_length: ``maxLength`` for unbounded strings in the grammar's schema.
        max_items: ``maxItems`` for unbounded arrays in the grammar's schema.
    """
    json_schema, convert = _json_schema_of(schema)
    grammar_schema = tighten_schema(
        json_schema, max_string_length=max_string_length, max_items=max_items
    )
    bound = model.bind(
        response_format={"type": "json_object", "schema": grammar_schema}, max_tokens=max_tokens
    )

    def finish(message: BaseMessage) -> Any:
        return _result(message, json_schema, convert, include_raw=include_raw)

    return bound | RunnableLambda(finish, name="parse_structured_output")


def _json_schema_of(schema: dict[str, Any] | type) -> tuple[dict[str, Any], Converter]:
    if isinstance(schema, dict):
        return schema, _identity
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        model_class = schema

        def convert(value: Any) -> Any:
            try:
                return model_class.model_validate(value)
            except ValidationError as exc:
                raise StructuredOutputParseError(
                    f"the model's output does not fit {model_class.__name__}: {exc}"
                ) from exc

        return model_class.model_json_schema(), convert
    raise UsageError(
        f"structured output needs a JSON Schema dict or a pydantic model class, not {schema!r}"
    )


def _identity(value: Any) -> Any:
    return value


def _result(
    message: BaseMessage, schema: dict[str, Any], convert: Converter, *, include_raw: bool
) -> Any:
    text = message.content if isinstance(message.content, str) else message.text
    finish_reason = message.response_metadata.get("finish_reason")
    parsed: Any = None
    error: StructuredOutputParseError | None = None
    try:
        parsed = convert(parse_structured(text, schema, finish_reason=finish_reason))
    except StructuredOutputParseError as exc:
        error = exc
    if include_raw:
        raw = message if isinstance(message, AIMessage) else AIMessage(content=text)
        return {"raw": raw, "parsed": parsed, "parsing_error": error}
    if error is not None:
        raise error
    return parsed
