"""One flag vocabulary for every ``sea`` command: the parser class that catches a long
option written with one dash, and the hidden old spellings of renamed options.

An option has one name across the commands (``--playbooks DIR`` wherever playbook
directories are searched, a playbook named by the first argument, ``--approve
[all|low|medium|high|IDS]`` wherever something is approved; ``tests/test_flags.py`` compares
every parser against one table). A spelling that was renamed keeps working, hidden from
``--help``, and says once on stderr which spelling replaces it: a user's scripts do not
break.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


class SeaParser(argparse.ArgumentParser):
    """An argument parser that refuses a long option written with one dash.

    ``sea run -input hi`` would otherwise be read as ``-i nput`` and a playbook named
    ``hi``; it is a usage error naming ``--input`` (exit 2) instead.
    """

    def _parse_optional(self, arg_string: str) -> Any:
        if len(arg_string) > 2 and arg_string[0] == "-" and arg_string[1] != "-":
            name = arg_string.partition("=")[0]
            meant = "-" + name
            if meant in self._option_string_actions:
                self.error(f"{name}: a long option takes two dashes; did you mean {meant}?")
        return super()._parse_optional(arg_string)


class Renamed(argparse.Action):
    """An old spelling of an option: hidden from ``--help``, it sets what the new spelling
    sets (appends, with ``append=True``) and warns once on stderr which spelling replaces it.

    ``convert`` turns the old value into the new option's (``--up-to low`` gives
    ``--approve low``).
    """

    def __init__(self, option_strings: Sequence[str], dest: str, *, new: str,
                 append: bool = False, convert: Any = None, **kwargs: Any) -> None:
        kwargs["help"] = argparse.SUPPRESS
        super().__init__(option_strings, dest, **kwargs)
        self.new = new
        """How the option is spelled now."""
        self.append = append
        self.convert = convert
        self._warned = False

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if not self._warned:
            self._warned = True
            print(f"sea: warning: {option_string} is an old spelling; use {self.new}",
                  file=sys.stderr)
        value = self.convert(values) if self.convert is not None else values
        if self.append:
            value = [*(getattr(namespace, self.dest, None) or []), value]
        setattr(namespace, self.dest, value)

