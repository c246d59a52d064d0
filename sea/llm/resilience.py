"""Rate limits: recognising a provider's "too many requests" answer, and waiting before
asking again with bounded exponential backoff and jitter.

The waiting is injected (:attr:`Backoff.sleep`, :attr:`Backoff.random`) so that tests do not
wait and are repeatable.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from sea.errors import UsageError

Sleep = Callable[[float], Awaitable[None]]

_RATE_LIMIT_NAMES = ("ratelimit", "resourceexhausted", "toomanyrequests")


def is_rate_limit(exc: BaseException) -> bool:
    """The error is a provider's rate-limit answer (HTTP 429 or a rate-limit error class),
    itself or one of its causes."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names = (cls.__name__.lower() for cls in type(current).__mro__)
        if any(marker in name for name in names for marker in _RATE_LIMIT_NAMES):
            return True
        if _status(current) == 429:
            return True
        current = current.__cause__ or current.__context__
    return False


def _status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        for name in ("status_code", "status"):
            value = getattr(holder, name, None)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


@dataclass(frozen=True, slots=True)
class Backoff:
    """How a rate-limited request is asked again.

    The n-th wait (n from 0) is ``min(max_delay_s, base_delay_s * 2**n)``, less a random
    share of up to ``jitter`` of it (so callers that were refused together do not return
    together).

    Attributes:
        retries: How many times a rate-limited request is asked again (0: never).
        base_delay_s: The first wait.
        max_delay_s: The longest wait.
        jitter: The largest share of a wait taken off at random (0 to 1).
        sleep: Waits this many seconds (``asyncio.sleep``; tests pass their own).
        random: A number in [0, 1) (``random.random``; tests pass their own).
    """

    retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    jitter: float = 0.5
    sleep: Sleep = field(default=asyncio.sleep, compare=False)
    random: Callable[[], float] = field(default=random.random, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or (
            self.retries < 0
        ):
            raise UsageError(f"Backoff.retries must be an integer >= 0, got {self.retries!r}")
        for name in ("base_delay_s", "max_delay_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise UsageError(f"Backoff.{name} must be a number >= 0, got {value!r}")
        if not 0 <= self.jitter <= 1:
            raise UsageError(f"Backoff.jitter must be between 0 and 1, got {self.jitter!r}")

    def delay(self, attempt: int) -> float:
        """The wait before asking again after the ``attempt``-th refusal (from 0)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2 ** min(attempt, 62)))
        share: float = self.random()
        return float(ceiling * (1 - self.jitter * share))
