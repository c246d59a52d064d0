"""The one thing SQL helpers need from a backend: an open transaction that runs ``?`` SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

Row = tuple[Any, ...]


class Tx(Protocol):
    """One open transaction (or read snapshot) of a backend; SQL uses ``?`` placeholders."""

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run ``sql`` and return every row."""
        ...

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run ``sql`` for its effect."""
        ...


def main_thread_id(persona: str) -> str:
    """The id of a persona's main thread."""
    return f"{persona}:main"
