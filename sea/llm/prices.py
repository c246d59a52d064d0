"""What model calls cost: a price table the host sets, per model name.

Prices are per million tokens, input and output apart, in whatever currency the host
chooses. The bundled local model (and the scripted and replay models) cost nothing, whatever
the table says; a model the table does not name costs ``default`` (0 unless set).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from sea.errors import UsageError

FREE_MODEL_TYPES = frozenset({"sea-local-llama-cpp", "scripted"})
"""The ``_llm_type`` of models that run on the host itself (they cost 0)."""


@dataclass(frozen=True, slots=True)
class Price:
    """The price of a model's tokens, per million."""

    input_per_million: float = 0.0
    output_per_million: float = 0.0

    def __post_init__(self) -> None:
        for name in ("input_per_million", "output_per_million"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not (
                math.isfinite(value) and value >= 0
            ):
                raise UsageError(f"Price.{name} must be a number >= 0, got {value!r}")

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """The cost of these tokens."""
        return (tokens_in * self.input_per_million + tokens_out * self.output_per_million) / 1e6


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model name (as call records name models, e.g. ``gpt-4o-mini``).

    Attributes:
        prices: Model name → its price.
        default: The price of a model the table does not name.
    """

    prices: Mapping[str, Price] = field(default_factory=dict)
    default: Price = field(default_factory=Price)

    def cost(self, model: str, llm_type: str, tokens_in: int, tokens_out: int) -> float:
        """What a call of ``model`` (of this ``_llm_type``) with these tokens cost."""
        if llm_type in FREE_MODEL_TYPES:
            return 0.0
        return self.prices.get(model, self.default).cost(tokens_in, tokens_out)
