"""``python -m sea``: the command line."""

from sea.cli import console

console()
