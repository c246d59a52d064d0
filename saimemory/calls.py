"""Call records: one row per model or tool call a pulse made (telemetry, ``sea stats``).

The engine writes them (``sea.host``) and reads them back for statistics; the store only
keeps them, checked for shape, and filters them by persona and time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

CallKind = Literal["model", "tool"]
CALL_KINDS: tuple[CallKind, ...] = ("model", "tool")
CallOutcome = Literal["ok", "error", "cancelled"]
CALL_OUTCOMES: tuple[CallOutcome, ...] = ("ok", "error", "cancelled")
CacheOutcome = Literal["hit", "miss"]
CACHE_OUTCOMES: tuple[CacheOutcome, ...] = ("hit", "miss")


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call a pulse made.

    Attributes:
        persona: The persona whose pulse made the call.
        kind: ``model`` or ``tool``.
        name: The model's name, or the tool's.
        outcome: ``ok``, ``error`` or ``cancelled``.
        pulse_id: The pulse (None for a call outside one).
        playbook: The calling playbook.
        node: The calling node.
        pattern: For a model call: the prompt pattern of its context
            (``base_main_specialized``, ``base_main`` or ``base_specialized``).
        model_kind: For a model call: ``light`` or ``normal``.
        latency_s: Wall time of the call, retries included.
        tokens_in: Input tokens (model calls).
        tokens_out: Output tokens (model calls).
        retries: How often the model was asked again (rejected answers, rate limits).
        cost: What the call cost, in the host's price table's currency.
        fallback: The answer came from a fallback model (the first model failed).
        error: What went wrong, when the outcome is not ``ok``.
        cache: For a model call with a response cache: ``hit`` (answered from the cache,
            no model call) or ``miss``; None: no cache.
        tokens_saved: For a cache hit: the tokens the cached call had used.
        created_at: When the store received it (set by the store).
        id: The store's id of the record (set by the store).
    """

    persona: str
    kind: CallKind
    name: str
    outcome: CallOutcome
    pulse_id: str | None = None
    playbook: str | None = None
    node: str | None = None
    pattern: str | None = None
    model_kind: str | None = None
    latency_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    retries: int = 0
    cost: float = 0.0
    fallback: bool = False
    error: str | None = None
    cache: CacheOutcome | None = None
    tokens_saved: int = 0
    created_at: datetime | None = None
    id: int | None = None
