"""Number options: one parser serves every ``--option N`` of the commands, with the same
words when the text is not a number and when it is out of range."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def number_option(
    convert: Callable[[str], float], what: str, fits: Callable[[float], bool], bound: str
) -> Callable[[str], float]:
    """An argparse ``type``: ``convert`` the text (``int`` or ``float``), which must then
    ``fits``; ``what`` names the number and ``bound`` the range in the messages (``expected
    a whole number >= 0, got 'x'``)."""

    def parse(text: str) -> float:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not (math.isfinite(value) and fits(value)):
            raise argparse.ArgumentTypeError(f"expected {what} {bound}, got {text!r}")
        return value

    return parse


count = number_option(int, "a whole number", lambda v: v >= 0, ">= 0")
"""A whole number of zero or more."""
positive_count = number_option(int, "a whole number", lambda v: v >= 1, ">= 1")
"""A whole number of one or more."""
amount = number_option(float, "an amount", lambda v: v >= 0, ">= 0")
"""A finite amount of zero or more."""
seconds = number_option(float, "a number of seconds", lambda v: v >= 0, ">= 0")
"""A finite number of seconds, zero or more."""
positive_seconds = number_option(float, "a number of seconds", lambda v: v > 0, "> 0")
"""A finite number of seconds, more than zero."""
