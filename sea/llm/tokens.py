"""Tokens counted as tokens: each model's own tokenizer where one is at hand, an estimate
otherwise, and the history's token budget of each model.

:func:`counter_for` picks how a model's tokens are counted:

- a model that counts its own tokens (it has a ``count_tokens(text) -> int`` method, as the
  bundled local model has, :meth:`sea.chat.local.LocalChatModel.count_tokens`: its llama
  tokenizer);
- an OpenAI chat model, with ``tiktoken`` when it is installed (it comes with the
  ``openai`` extra) and has its encoding (downloaded on first use): the model's encoding,
  ``o200k_base`` for a model tiktoken does not know;
- any other model: an estimate, four characters a token.

A model that cannot count a text (the local model whose file is missing) is estimated for
it: the call itself then fails, or falls back, as it would have.

A :class:`TokenBudgets` says how many tokens of earlier conversation a call's history may
hold, per model (``LLMOptions.history_tokens``); :func:`fit_history` keeps the newest
messages that fit, each whole (a message is kept or left out, never cut).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from saimemory.records import Message
from sea.errors import UsageError
from sea.llm.messages import estimate_tokens

OPENAI_TYPES = frozenset({"openai-chat", "azure-openai-chat"})
"""The ``_llm_type`` of LangChain's OpenAI chat models (tiktoken counts their tokens)."""
TIKTOKEN_FALLBACK = "o200k_base"
"""The encoding of an OpenAI model tiktoken does not know by name."""
MESSAGE_OVERHEAD = 4
"""Tokens a chat template adds around each message (role markers), added per message."""


@dataclass(frozen=True, slots=True)
class TokenCounter:
    """How one model's tokens are counted.

    Attributes:
        by: ``model`` (the model's own tokenizer), ``tiktoken:<encoding>`` or ``estimate``.
        count: The tokens of a text.
    """

    by: str
    count: Callable[[str], int]

    def messages(self, texts: Sequence[str]) -> int:
        """The tokens of messages with these texts, each with its template overhead."""
        return sum(self.count(text) + MESSAGE_OVERHEAD for text in texts)


ESTIMATE = TokenCounter("estimate", lambda text: estimate_tokens([text]))
"""Four characters a token (a model whose tokenizer is not at hand)."""


def counter_for(model: Any) -> TokenCounter:
    """How ``model``'s tokens are counted (see the module's text)."""
    own = getattr(model, "count_tokens", None)
    if callable(own):

        def counted(text: str) -> int:
            try:
                return int(own(text))
            except Exception:  # a model that cannot count now (its file is missing...):
                return ESTIMATE.count(text)  # its call, not the count, says why

        return TokenCounter("model", counted)
    if getattr(model, "_llm_type", None) in OPENAI_TYPES:
        encoding = _tiktoken_encoding(getattr(model, "model_name", None))
        if encoding is not None:
            return TokenCounter(f"tiktoken:{encoding.name}",
                                lambda text: len(encoding.encode(text, disallowed_special=())))
    return ESTIMATE


def _tiktoken_encoding(name: object) -> Any | None:
    """The model's tiktoken encoding; None when tiktoken is not installed or cannot load
    it (its encodings are downloaded once, then kept: offline, the estimate serves)."""
    try:
        tiktoken = importlib.import_module("tiktoken")
    except ImportError:
        return None
    try:
        try:
            return tiktoken.encoding_for_model(str(name))
        except (KeyError, ValueError):
            return tiktoken.get_encoding(TIKTOKEN_FALLBACK)
    except Exception:  # no network for the encoding's file, a broken cache...
        return None


@dataclass(frozen=True, slots=True)
class TokenBudgets:
    """The tokens of earlier conversation a call's history may hold, per model.

    The budget applies besides the history's message and character budget
    (``RuntimeConfig.history_budget``), after it: the conversation it lets through is
    counted in the model's tokens, and the oldest messages that do not fit are left out
    whole (the short-term memory summarizes them, as it does what the store cut).

    Attributes:
        default: The budget of a model not named in ``models`` (None: no token budget).
        models: A budget per model name (as call records name it, ``model_name``).
    """

    default: int | None = None
    models: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", MappingProxyType(dict(self.models)))
        for name, value in (("default", self.default), *self.models.items()):
            if value is None and name == "default":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"a history token budget must be a whole number >= 1, got "
                                 f"{value!r} for {name!r}")

    def for_model(self, name: str) -> int | None:
        """The budget of the model called ``name`` (None: none)."""
        return self.models.get(name, self.default)

    @property
    def active(self) -> bool:
        """Any model has a budget."""
        return self.default is not None or bool(self.models)


@dataclass(frozen=True, slots=True)
class Fitted:
    """The history cut to its token budget.

    Attributes:
        history: What is kept, oldest first.
        dropped: The earlier conversation left out, oldest first.
        tokens: The tokens of the earlier conversation kept.
    """

    history: list[Message]
    dropped: list[Message]
    tokens: int


def fit_history(
    history: Sequence[Message], pulse_id: str | None, limit: int, counter: TokenCounter
) -> Fitted:
    """Keep the newest earlier conversation of ``history`` that fits in ``limit`` tokens.

    The messages of ``pulse_id`` (the running pulse) are kept whatever their size; the
    earlier conversation is taken newest first until the next message would pass the
    limit, and what is older is left out. A message is kept whole or not at all.
    """
    earlier = [m for m in history if pulse_id is None or m.pulse_id != pulse_id]
    kept_ids: set[int] = set()
    used = 0
    for message in reversed(earlier):
        size = counter.count(message.content) + MESSAGE_OVERHEAD
        if used + size > limit:
            break
        kept_ids.add(message.id)
        used += size
    dropped = [m for m in earlier if m.id not in kept_ids]
    if not dropped:
        return Fitted(list(history), [], used)
    kept = [m for m in history if m.id in kept_ids or (pulse_id is not None
                                                      and m.pulse_id == pulse_id)]
    return Fitted(kept, dropped, used)


def tokens_of(counter: TokenCounter, texts: Sequence[str]) -> int:
    """The tokens of ``texts`` counted by ``counter`` (at least one each)."""
    return sum(max(1, counter.count(text)) for text in texts) if texts else 0


__all__ = [
    "ESTIMATE",
    "Fitted",
    "TokenBudgets",
    "TokenCounter",
    "counter_for",
    "fit_history",
    "tokens_of",
]
