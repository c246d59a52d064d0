"""Regular expressions of JSON Schemas on RE2, whose time is linear in the text.

Python's ``re`` backtracks (``^(a+)+$`` against thirty ``a`` and a ``!`` takes about a
minute); the ``pattern`` keywords of SEA's validators (:mod:`sea.lang.jsonschemas`) run on
RE2 instead. A pattern RE2 cannot compile (a backreference, a lookaround) never falls back to
``re``: :func:`compiled` says why (:class:`Unusable`), and the value is rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_SHOWN = 60
"""Characters of an instance an error message shows."""

@dataclass(frozen=True, slots=True)
class Unusable:
    """Why RE2 cannot run a pattern."""

    reason: str
    """What is wrong, said of the pattern (``is not a valid regular expression: …``)."""
    unsupported: bool
    """Python's ``re`` compiles it: a feature RE2 leaves out (backreference, lookaround)."""


@lru_cache(maxsize=1)
def _re2() -> tuple[Any, Any]:
    """The RE2 module and its options (imported on the first pattern: most schemas have
    none)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # a bad pattern is reported, not logged to stderr
    return re2, options


@lru_cache(maxsize=1024)
def compiled(pattern: str) -> Any:
    """The RE2 program of ``pattern``, or an :class:`Unusable` saying why there is none."""
    re2, options = _re2()
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError, ValueError):
        return Unusable(f"is not a valid regular expression: {reason}", unsupported=False)
    return Unusable(
        f"uses a feature the linear-time regex engine (RE2) does not have: {reason}",
        unsupported=True,
    )


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used by SEA's validators (said of it: ``is not a valid
    regular expression: …``, ``uses a feature … RE2 does not have: …``), or None."""
    found = compiled(pattern)
    return found.reason if isinstance(found, Unusable) else None


def shown(text: str) -> str:
    """``text`` for an error message: its repr, cut after :data:`_SHOWN` characters."""
    return repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + f"… ({len(text)} chars)"


def search(pattern: str, text: str) -> bool | str:
    """Whether ``pattern`` matches somewhere in ``text``; the problem when it cannot run."""
    found = compiled(pattern)
    if isinstance(found, Unusable):
        return f"the pattern {pattern!r} cannot be used: it {found.reason}"
    return found.search(text) is not None


