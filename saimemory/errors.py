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


class InvalidMessageError(MemoryStoreError):
    """A message (or an imported line) violates a constraint; nothing was written."""

    code = "MEM001"


class NotFoundError(MemoryStoreError):
    """A thread or persona the caller named does not exist (or belongs to someone else)."""

    code = "MEM002"


class SchemaError(MemoryStoreError):
    """The database is corrupt, not a SAIMemory store, or newer than this code; left untouched."""

    code = "MEM003"


class StoreUnavailableError(MemoryStoreError):
    """The database could not be opened or reached (path, permissions, server, driver)."""

    code = "MEM004"


class ImportFormatError(MemoryStoreError):
    """An export file line is not a valid message record; names the line."""

    code = "MEM005"


class InvalidQueryError(MemoryStoreError):
    """A search query or filter is unusable (empty query, bad limit, inverted time range)."""

    code = "MEM006"


class UnknownProfileError(MemoryStoreError):
    """A context profile that is not one of conversation, router, worker, worker_light."""

    code = "MEM007"


class StaleVersionError(MemoryStoreError):
    """A record was saved from a version that is no longer the stored one (someone else saved
    it meanwhile); nothing was written. Read it again and redo the change."""

    code = "MEM008"


class InvalidPlanError(MemoryStoreError):
    """A plan violates a constraint of the store (an id, a status, a kind, a time); nothing
    was written."""

    code = "MEM009"


class ReadOnlyStoreError(MemoryStoreError):
    """A write to a store opened read-only (its file or directory is not writable); nothing
    was written. Reads still work."""

    code = "MEM010"


class PinLimitError(MemoryStoreError):
    """A persona that already keeps its five pinned items was asked to pin another;
    nothing was written. Unpin one first."""

    code = "MEM011"
