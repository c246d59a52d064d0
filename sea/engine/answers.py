"""A person's answer to an approval request, in every form a host may give it.

One place reads answers, for a tool's approval (``--ask-before``) and for a plan's
(:mod:`sea.engine.plans.tools`):

====================================================  ========================================
answer                                                means
====================================================  ========================================
``True``, ``"approve"``, ``"yes"``, ``"all"``,        approve everything asked about
``{"approved": true}``, ``{"all": true}``
``{"ids": ["1", "3"]}``                               approve these specs only (a plan)
``{"up_to": "low"}``, ``"low"`` (or ``medium``)       approve the specs of at most that risk
``False``, ``"deny"``, ``{"approved": false}``,       refuse
``{"deny": true}``, ``{"ids": []}``, anything else
====================================================  ========================================

An object may also carry ``approver`` (who answers; ``"user"`` when absent) and ``reason``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Risk = Literal["low", "medium", "high"]
RISK_LEVELS: tuple[Risk, ...] = ("low", "medium", "high")
_YES = frozenset({"approve", "approved", "allow", "yes", "y", "ok", "all"})


@dataclass(frozen=True, slots=True)
class Answer:
    """What a person answered.

    Attributes:
        approved: Whether anything is approved.
        ids: The spec ids approved (None: everything asked about, unless ``up_to``).
        up_to: Approve only what is at most this risky.
        approver: Who answered.
        reason: Why, if they said.
        understood: False when the answer had no form above (it then refuses).
    """

    approved: bool
    ids: tuple[str, ...] | None = None
    up_to: Risk | None = None
    approver: str = "user"
    reason: str = ""
    understood: bool = True


def parse_answer(answer: Any) -> Answer:
    """The :class:`Answer` a host's answer gives (see the module's table)."""
    if isinstance(answer, bool):
        return Answer(answer)
    if isinstance(answer, str):
        word = answer.strip().lower()
        level = _LEVELS.get(word)
        if level is not None:
            return Answer(True, up_to=level)
        return Answer(word in _YES, understood=word in _YES or word in _NO)
    if isinstance(answer, Mapping):
        return _from_object(answer)
    return Answer(False, understood=False)


_NO = frozenset({"deny", "denied", "no", "n", "refuse", "reject"})
_LEVELS: dict[str, Risk] = {level: level for level in RISK_LEVELS}


def _from_object(answer: Mapping[str, Any]) -> Answer:
    approver = answer.get("approver")
    who = approver.strip() if isinstance(approver, str) and approver.strip() else "user"
    reason = answer.get("reason")
    why = reason if isinstance(reason, str) else ""
    if answer.get("approved") is False or answer.get("deny") is True:
        return Answer(False, approver=who, reason=why)
    ids = answer.get("ids")
    if ids is not None:
        if not isinstance(ids, list | tuple) or not all(
                isinstance(item, str | int) and not isinstance(item, bool) for item in ids):
            return Answer(False, approver=who, reason=why, understood=False)
        chosen = tuple(str(item) for item in ids)
        return Answer(bool(chosen), ids=chosen, approver=who, reason=why)
    if "up_to" in answer:
        level = _LEVELS.get(str(answer["up_to"]))
        if level is None:
            return Answer(False, approver=who, reason=why, understood=False)
        return Answer(True, up_to=level, approver=who, reason=why)
    if answer.get("all") is True or answer.get("approved") is True:
        return Answer(True, approver=who, reason=why)
    return Answer(False, approver=who, reason=why, understood=False)
