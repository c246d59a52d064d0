"""``--limit NAME=VALUE``: every bound of :class:`~sea.engine.limits.Limits` from the
command line.

The bounds that have options of their own (``--ask-before``, the budget's ``--max-*``,
``--tool-timeout``) keep them; ``--limit`` sets the others (``max_steps``, the size limits,
``ref_text_cap``, ``unlisted_exec`` ...), each checked where the option is read: an unknown
name gets a did-you-mean and the list of names, a value of the wrong kind says which kind.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from sea.engine.limits import Limits
from sea.lang.hints import suggest

_OWN_OPTIONS = {"approval_tools": "--ask-before", "budget": "--max-calls, --max-tokens-in, "
                "--max-tokens-out and --max-cost", "tool_timeout_s": "--tool-timeout"}
"""The fields set by options of their own, not by ``--limit``."""

_CHOICES = {"unlisted_exec": ("deny", "ask")}
"""The fields whose value is one of a few words."""

NAMES: tuple[str, ...] = tuple(
    f.name for f in fields(Limits) if f.name not in _OWN_OPTIONS
)
"""The bounds ``--limit`` sets, in the order :class:`Limits` declares them."""


def limit_option(text: str) -> tuple[str, int | str]:
    """``NAME=VALUE`` → (name, value): a positive whole number, or one of a field's words."""
    name, equals, value = (part.strip() for part in text.partition("="))
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE (e.g. max_steps=1000), got {text!r}")
    if name in _OWN_OPTIONS:
        raise argparse.ArgumentTypeError(f"{name} has an option of its own: {_OWN_OPTIONS[name]}")
    if name not in NAMES:
        raise argparse.ArgumentTypeError(
            f"no limit named {name!r}; {suggest(name, NAMES)}the limits are {', '.join(NAMES)}")
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            raise argparse.ArgumentTypeError(
                f"{name} is one of {', '.join(_CHOICES[name])}, got {value!r}")
        return name, value
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{name} is a whole number of at least 1, got {value!r}")
    return name, int(value)


def add_limit_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--limit NAME=VALUE`` (repeatable)."""
    parser.add_argument(
        "--limit", action="append", default=[], type=limit_option, metavar="NAME=VALUE",
        help="a bound of the pulse, e.g. max_steps=1000 or max_tool_result_chars=2000000 "
        f"(repeatable; the names: {', '.join(NAMES)}; docs/reference/limits.md lists each with "
        "its default)",
    )


def limits_of(args: argparse.Namespace, **own: Any) -> Limits:
    """The pulse's :class:`Limits`: ``--limit`` (the last of a name wins) and the fields
    that have options of their own, given as ``own``."""
    chosen: dict[str, Any] = dict(getattr(args, "limit", None) or ())
    return Limits(**chosen, **own)


def limit_words(pairs: Sequence[tuple[str, Any]]) -> list[str]:
    """The ``--limit`` options again, as words of a command line."""
    return [word for name, value in dict(pairs).items() for word in ("--limit", f"{name}={value}")]
