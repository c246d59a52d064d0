"""What model calls cost: a price table the host sets, per model name.

Prices are per million tokens, input and output apart, in whatever currency the host
chooses. A model the table does not name costs ``default`` (0 unless set), except the models
that run on the host (the bundled local model, the scripted and replay models), which cost
nothing unless the table names them.

A price file (``sea run --prices FILE``, :func:`load_prices`) is JSON::

    {"models": {"gpt-4o-mini": {"input_per_million": 0.15, "output_per_million": 0.6}},
     "default": {"input_per_million": 1.0, "output_per_million": 4.0}}
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sea.errors import UsageError
from sea.jsonfile import CONFIG_FILES, ReadLimit, read_json
from sea.jsontypes import json_type

FREE_MODEL_TYPES = frozenset({"sea-local-llama-cpp", "scripted"})
"""The ``_llm_type`` of models that run on the host itself (they cost 0 unless a table names
them)."""


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

    @property
    def free(self) -> bool:
        """Every token costs 0."""
        return self.input_per_million == 0 and self.output_per_million == 0

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """The cost of these tokens."""
        return (tokens_in * self.input_per_million + tokens_out * self.output_per_million) / 1e6


FREE = Price()
"""The price of a model that costs nothing."""


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model name (as call records name models, e.g. ``gpt-4o-mini``).

    Attributes:
        prices: Model name → its price.
        default: The price of a model the table does not name.
    """

    prices: Mapping[str, Price] = field(default_factory=dict)
    default: Price = field(default_factory=Price)

    def price(self, model: str, llm_type: str) -> Price:
        """The price of ``model`` (of this ``_llm_type``): its own, else free for a model
        that runs on the host, else the default."""
        named = self.prices.get(model)
        if named is not None:
            return named
        return FREE if llm_type in FREE_MODEL_TYPES else self.default

    def cost(self, model: str, llm_type: str, tokens_in: int, tokens_out: int) -> float:
        """What a call of ``model`` (of this ``_llm_type``) with these tokens cost."""
        return self.price(model, llm_type).cost(tokens_in, tokens_out)

    def unpriced(self, models: Iterable[tuple[str, str]]) -> list[str]:
        """The names of ``models`` (name and ``_llm_type``) whose every call costs 0 by
        this table, in their order: a cost budget never counts their calls."""
        return [name for name, llm_type in models if self.price(name, llm_type).free]


class _PriceEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    input_per_million: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    output_per_million: float = Field(default=0.0, ge=0, allow_inf_nan=False)


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    models: dict[str, _PriceEntry] = Field(default_factory=dict)
    default: _PriceEntry = Field(default_factory=_PriceEntry)


PRICE_FILE_FORM = (
    '{"models": {"MODEL": {"input_per_million": 0.15, "output_per_million": 0.6}}, '
    '"default": {"input_per_million": 0, "output_per_million": 0}}'
)
"""The shape of a price file, for error messages."""


def load_prices(path: Path, *, limit: ReadLimit = CONFIG_FILES) -> PriceTable:
    """The price table of a JSON price file of at most ``limit`` bytes.

    Raises:
        UsageError: the file cannot be read (not a regular file, larger than ``limit``), is
            not JSON, or does not have the price file's shape (the message names the file,
            each field that is wrong and what it expects).
    """
    data = read_json(path, "price file", limit=limit)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a price file is a JSON object, not a JSON {json_type(data)}; "
                         f"it reads {PRICE_FILE_FORM} (prices per million tokens)")
    try:
        parsed = _PriceFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc'])}: "
            + ("unknown field" if error["type"] == "extra_forbidden"
               else f"{error['msg'][:1].lower()}{error['msg'][1:]}")
            for error in exc.errors()[:4]
        )
        raise UsageError(
            f"{path}: not a price file: {problems}; a price file reads {PRICE_FILE_FORM} "
            "(prices per million tokens)"
        ) from None
    return PriceTable(
        {name: _price(entry) for name, entry in parsed.models.items()}, _price(parsed.default)
    )


def _price(entry: _PriceEntry) -> Price:
    return Price(entry.input_per_million, entry.output_per_million)
