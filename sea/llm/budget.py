"""Budgets of a pulse's model calls: how many calls, tokens in and out, and cost.

A :class:`Budget` is part of the host's ``Limits`` (``Limits.budget``). What a pulse has spent
is kept in its state (the ``spent`` channel, added up like the step count), so it survives an
approval wait and a resume in another process; while a node runs, its calls are counted on
the pulse's :class:`Meter`, which the engine sets from the state when the node starts. A node
that waits for a person after calling the model (an ``actions`` node showing its plan) puts
what it spent in its request (``spent``), and counts it again when, resumed, it takes what it
had decided instead of asking the model again (:meth:`Meter.credit`).

A call is refused before it is made when the pulse has made ``max_calls`` calls already, or
has already used up a token or cost budget; a call whose tokens or cost take the pulse past
a budget fails after it is made (its answer is dropped). Either way the error is a
:class:`~sea.llm.errors.BudgetExceeded` (``SEA566``) naming the budget, which the node's
``error_next`` routes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sea.errors import UsageError
from sea.llm.errors import BudgetExceeded

BUDGET_FIELDS = ("max_calls", "max_tokens_in", "max_tokens_out", "max_cost")


@dataclass(frozen=True, slots=True)
class Budget:
    """What one pulse's model calls may use (None: no bound).

    Attributes:
        max_calls: Model calls (each call counts once, whatever its retries or fallbacks).
        max_tokens_in: Input tokens, over every call and attempt.
        max_tokens_out: Output tokens, over every call and attempt.
        max_cost: Cost, in the currency of the host's price table.
    """

    max_calls: int | None = None
    max_tokens_in: int | None = None
    max_tokens_out: int | None = None
    max_cost: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_calls", "max_tokens_in", "max_tokens_out"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise UsageError(f"Budget.{name} must be an integer >= 0 or None, got {value!r}")
        cost = self.max_cost
        if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)
                                 or not math.isfinite(cost) or cost < 0):
            raise UsageError(f"Budget.max_cost must be a number >= 0 or None, got {cost!r}")


@dataclass(frozen=True, slots=True)
class Spent:
    """What a pulse's model calls have used."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0

    @classmethod
    def from_state(cls, value: Mapping[str, Any] | None) -> Spent:
        """The spent amounts of a state's ``spent`` channel (missing keys are 0)."""
        if not value:
            return NOTHING_SPENT  # a pulse that made no model call yet
        data = value
        return cls(
            calls=int(data.get("calls", 0)),
            tokens_in=int(data.get("tokens_in", 0)),
            tokens_out=int(data.get("tokens_out", 0)),
            cost=float(data.get("cost", 0.0)),
        )

    def to_state(self) -> dict[str, float]:
        """The ``spent`` channel's form: ``{"calls", "tokens_in", "tokens_out", "cost"}``."""
        return {"calls": self.calls, "tokens_in": self.tokens_in,
                "tokens_out": self.tokens_out, "cost": self.cost}

    def plus(self, calls: int, tokens_in: int, tokens_out: int, cost: float) -> Spent:
        """These amounts added."""
        return Spent(self.calls + calls, self.tokens_in + tokens_in,
                     self.tokens_out + tokens_out, self.cost + cost)

    def minus(self, other: Spent) -> Spent:
        """What was spent since ``other``."""
        return Spent(self.calls - other.calls, self.tokens_in - other.tokens_in,
                     self.tokens_out - other.tokens_out, self.cost - other.cost)

    def is_zero(self) -> bool:
        """Nothing was spent."""
        return not (self.calls or self.tokens_in or self.tokens_out or self.cost)


NOTHING_SPENT = Spent()
"""No call, no token, no cost."""


def add_spent(
    left: Mapping[str, float] | None, right: Mapping[str, float] | None
) -> dict[str, float]:
    """Reducer of the state's ``spent`` channel: amounts are added per key."""
    if not right:
        return dict(left or {})
    merged = dict(left or {})
    for key, value in right.items():
        merged[key] = merged.get(key, 0) + value
    return merged


class Meter:
    """Counts one pulse's model calls against its budget.

    The engine calls :meth:`sync` when a node starts (the state holds what the pulse spent
    before it) and :meth:`since` when the node ends (what the node's calls added).
    """

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget or Budget()
        self.spent = Spent()
        self.node_start = Spent()
        """The count when the running node started."""

    def sync(self, state_spent: Mapping[str, Any] | None) -> Spent:
        """Set the count to what the state says was spent (a node starts); returns it."""
        self.spent = Spent.from_state(state_spent)
        self.node_start = self.spent
        return self.spent

    def node_spent(self) -> Spent:
        """What the running node's calls have spent so far."""
        return self.spent.minus(self.node_start)

    def credit(self, spent: Mapping[str, Any] | None) -> None:
        """Count again what a node spent before it waited for a person: its run was cut
        off by the wait (so the state never got it), and resumed it uses what it decided
        then instead of calling the model again."""
        if isinstance(spent, Mapping):
            earlier = Spent.from_state(spent)
            self.spent = self.spent.plus(earlier.calls, earlier.tokens_in, earlier.tokens_out,
                                         earlier.cost)

    def since(self, start: Spent) -> Spent:
        """What was spent since ``start``."""
        if self.spent is start:  # no call since: nothing to subtract
            return NOTHING_SPENT
        return self.spent.minus(start)

    def before_call(self) -> None:
        """Refuse a call the budget has no room for.

        Raises:
            BudgetExceeded: the pulse made ``max_calls`` calls, or used up a token or cost
                budget (a cost budget of 0 still allows calls that cost nothing).
        """
        b, s = self.budget, self.spent
        if b.max_calls is not None and s.calls >= b.max_calls:
            raise _refused("max_calls", f"made {s.calls} model calls", b.max_calls)
        for name, used in (("max_tokens_in", s.tokens_in), ("max_tokens_out", s.tokens_out)):
            bound = getattr(b, name)
            if bound is not None and used >= bound:
                raise _refused(name, f"used {used:,} tokens", bound)
        if b.max_cost is not None and s.cost > 0 and s.cost >= b.max_cost:
            raise _refused("max_cost", f"spent {s.cost:.6g}", b.max_cost)

    def add(self, tokens_in: int, tokens_out: int, cost: float) -> None:
        """Count one call that was made."""
        self.spent = self.spent.plus(1, tokens_in, tokens_out, cost)

    def after_call(self) -> None:
        """Fail a call that took the pulse past a token or cost budget.

        Raises:
            BudgetExceeded: a token or cost budget is now exceeded.
        """
        b, s = self.budget, self.spent
        for name, used in (("max_tokens_in", s.tokens_in), ("max_tokens_out", s.tokens_out)):
            bound = getattr(b, name)
            if bound is not None and used > bound:
                raise _passed(name, f"{used:,} tokens", bound)
        if b.max_cost is not None and s.cost > b.max_cost:
            raise _passed("max_cost", f"a cost of {s.cost:.6g}", b.max_cost)


def _refused(budget: str, done: str, bound: float) -> BudgetExceeded:
    return BudgetExceeded(
        f"budget {budget} exceeded: the pulse has {done} of its {bound:,} "
        f"(Limits.budget.{budget}); the call was not made",
        budget=budget,
    )


def _passed(budget: str, used: str, bound: float) -> BudgetExceeded:
    return BudgetExceeded(
        f"budget {budget} exceeded: the pulse's model calls reached {used}, past its "
        f"{bound:,} (Limits.budget.{budget}); this call's answer was dropped",
        budget=budget,
    )
