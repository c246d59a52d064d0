"""The store's own exception tree, with stable codes (``MEM001``…)."""

from __future__ import annotations


class MemoryStoreError(Exception):
    """Base of every error the store raises on purpose."""

    code = "MEM000"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
