"""SEA: a declarative playbook runtime for AI personas.

The error tree is imported eagerly; the language front end (``PlaybookLibrary``,
``check_document``, ``load_playbook_file``, ``CheckContext``, ``ToolCatalogue``) is imported
on first use, so ``import sea`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from sea.errors import (
    Diagnostic,
    ExecutionError,
    PlaybookError,
    PulseCancelled,
    SeaError,
    Severity,
    UsageError,
)

if TYPE_CHECKING:
    from sea.checks import CheckContext, ToolCatalogue
    from sea.library import PlaybookLibrary
    from sea.loader import LoadResult, check_document, load_playbook_file

_LAZY = {
    "CheckContext": "sea.checks",
    "ToolCatalogue": "sea.checks",
    "PlaybookLibrary": "sea.library",
    "LoadResult": "sea.loader",
    "check_document": "sea.loader",
    "load_playbook_file": "sea.loader",
}

__all__ = [
    "CheckContext",
    "Diagnostic",
    "ExecutionError",
    "LoadResult",
    "PlaybookError",
    "PlaybookLibrary",
    "PulseCancelled",
    "SeaError",
    "Severity",
    "ToolCatalogue",
    "UsageError",
    "check_document",
    "load_playbook_file",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sea' has no attribute {name!r}")
    return getattr(import_module(module), name)
