"""The host's settings of the call path: prices, rate-limit backoff, safety rules, short-term
memory, guidelines and the intent policy (``RuntimeConfig(llm=LLMOptions(...))``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sea.errors import UsageError
from sea.llm.cache import ResponseCache
from sea.llm.intent import IntentPolicy
from sea.llm.prices import PriceTable
from sea.llm.resilience import Backoff
from sea.llm.specialized import Guidelines
from sea.llm.tokens import TokenBudgets

DEFAULT_FOLD_LIMIT = 12
"""The most cut messages one update of the short-term memory reads, by default."""


@dataclass(frozen=True, slots=True)
class LLMOptions:
    """How a runtime's model calls are made, beyond which models.

    Attributes:
        prices: What each model's tokens cost (call records and the cost budget).
        backoff: How a rate-limited request is asked again.
        safety_rules: Text added to Base, after the persona's system prompt, in every call
            (none by default).
        short_term_memory: Keep each persona's short-term memory (a rolling summary of the
            conversation older than the history budget, written by the light model) and
            show it in Main whenever the history is cut.
        fold_limit: The most cut messages one update of the short-term memory reads (the
            newest ones; older ones not yet in the summary are left out of it), so that the
            update fits a small model's context.
        summary_words: About how long the short-term memory may grow, in words.
        guidelines: Where the Specialized guidelines are read from.
        intent: When an intent is too unsure to act on (the ``judge_intent`` tool).
        history_tokens: The tokens of earlier conversation a call's history may hold, per
            model, counted by the model's tokenizer (:mod:`sea.llm.tokens`; none by default).
        response_cache: Answer a deterministic call asked again from a cache instead of the
            model (:mod:`sea.llm.cache`; off by default).
    """

    prices: PriceTable = field(default_factory=PriceTable)
    backoff: Backoff = field(default_factory=Backoff)
    safety_rules: str = ""
    short_term_memory: bool = True
    fold_limit: int = DEFAULT_FOLD_LIMIT
    summary_words: int = 150
    guidelines: Guidelines = field(default_factory=Guidelines)
    intent: IntentPolicy = field(default_factory=IntentPolicy)
    history_tokens: TokenBudgets = field(default_factory=TokenBudgets)
    response_cache: ResponseCache | None = None

    def __post_init__(self) -> None:
        for name in ("fold_limit", "summary_words"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"LLMOptions.{name} must be a positive integer, got {value!r}")
