"""SEA: a declarative playbook runtime for AI personas.

The error tree is imported eagerly; the language front end (``PlaybookLibrary``,
``check_document``, ``load_playbook_file``, ``CheckContext``, ``ToolCatalogue``) and the
host API (``Runtime``, ``ModelSet``, ``Limits``, ``PulseResult``) are imported on first use,
so ``import sea`` stays cheap.
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
    from sea.limits import Limits
    from sea.llm.models import ModelSet
    from sea.loader import LoadResult, check_document, load_playbook_file
    from sea.result import PulseResult
    from sea.runtime import Runtime

_LAZY = {
    "CheckContext": "sea.checks",
    "ToolCatalogue": "sea.checks",
    "PlaybookLibrary": "sea.library",
    "LoadResult": "sea.loader",
    "check_document": "sea.loader",
    "load_playbook_file": "sea.loader",
    "Limits": "sea.limits",
    "ModelSet": "sea.llm.models",
    "PulseResult": "sea.result",
    "Runtime": "sea.runtime",
}

__all__ = [
    "CheckContext",
    "Diagnostic",
    "ExecutionError",
    "Limits",
    "LoadResult",
    "ModelSet",
    "PlaybookError",
    "PlaybookLibrary",
    "PulseCancelled",
    "PulseResult",
    "Runtime",
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
