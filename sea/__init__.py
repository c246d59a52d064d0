"""SEA: a declarative playbook runtime for AI personas."""

from sea.errors import (
    Diagnostic,
    ExecutionError,
    PlaybookError,
    PulseCancelled,
    SeaError,
    Severity,
    UsageError,
)

__all__ = [
    "Diagnostic",
    "ExecutionError",
    "PlaybookError",
    "PulseCancelled",
    "SeaError",
    "Severity",
    "UsageError",
]
